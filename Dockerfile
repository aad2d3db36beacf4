# mcpcheck as a container image: a static musl binary on Alpine, running as a non-root
# user, with the pinned official MCP schemas fetched (SHA-256 verified) at build time so
# the image checks schemas offline.
#
#   docker build -t mcpcheck .
#   docker run --rm --network host mcpcheck run --url http://127.0.0.1:8808/mcp
#   # a stdio server: build FROM this image, add the server's runtime, then
#   #   mcpcheck run -- node dist/index.js
#
# Alpine rather than distroless: stdio servers need their runtime (node, python) in the
# same image, and `apk add` gives it in one line; the image stays small.

FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
# The workspace manifest names the fixtures, so they come along (only mcpcheck is built).
COPY Cargo.toml Cargo.lock ./
COPY fixtures fixtures
COPY scenarios scenarios
COPY harness harness
RUN cargo build --release --locked -p mcpcheck \
    && install -m 755 target/release/mcpcheck /usr/local/bin/mcpcheck \
    && mcpcheck list | tail -n 1 \
    && mcpcheck schemas fetch --dest /usr/local/share/mcpcheck/schemas

FROM alpine:3.22
RUN adduser -D -H -u 10001 -s /sbin/nologin mcpcheck
COPY --from=build /usr/local/bin/mcpcheck /usr/local/bin/mcpcheck
COPY --from=build /usr/local/share/mcpcheck/schemas /usr/local/share/mcpcheck/schemas
ENV MCPCHECK_SCHEMA_DIR=/usr/local/share/mcpcheck/schemas
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["mcpcheck"]
CMD ["--help"]
