#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ for ClusterFuzzLite (and OSS-Fuzz: see
# fuzz/OSS-FUZZ.md) into $OUT, each with the committed seeds as its starting corpus
# (<target>_seed_corpus.zip), its dictionary (<target>.dict, named in <target>.options:
# fuzz/dict/scenario.dict, sse.dict, or jsonrpc.dict for the JSON-RPC targets), and the official schemas schema_dispatch needs ($OUT/mcp-schema:
# the pinned commit, each file checked against the SHA-256 in harness/src/schema/pins.rs).
#
# Runs outside the image too, with the local nightly toolchain and cargo-fuzz:
#   MCPCHECK_REPO=$PWD OUT=/tmp/cflite-out .clusterfuzzlite/build.sh
# (MCPCHECK_SCHEMA_DIR set: the schemas are copied from there, still checksum-checked).

repo="${MCPCHECK_REPO:-$SRC/mcpcheck}"
fuzz="$repo/fuzz"
mkdir -p "$OUT"

# Sanitizer and coverage flags come from the environment of the OSS-Fuzz builder (its
# cargo wrapper). Optimized by default, as the fuzzers run for hours; .ci/run's short
# smoke passes CFLITE_BUILD_FLAGS=--dev (a third of the build time).
flags="${CFLITE_BUILD_FLAGS:--O --debug-assertions}"
# shellcheck disable=SC2086 # the flags are words
(cd "$fuzz" && cargo fuzz build $flags)

targets="$(cd "$fuzz" && cargo fuzz list)"
[ -n "$targets" ] || { echo "build.sh: no fuzz targets in $fuzz" >&2; exit 1; }
case " $flags " in *" --dev "* | *" -D "*) profile=debug ;; *) profile=release ;; esac
built="$fuzz/target/x86_64-unknown-linux-gnu/$profile"
for target in $targets; do
    cp "$built/$target" "$OUT/"
    seeds="$fuzz/seeds/$target"
    if [ -d "$seeds" ]; then
        rm -f "$OUT/${target}_seed_corpus.zip"
        (cd "$seeds" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
    fi
    # Each target's dictionary: its input's own tokens (fuzz/dict/).
    case "$target" in
        scenario_parse) dict=scenario.dict ;;
        sse_events) dict=sse.dict ;;
        *) dict=jsonrpc.dict ;;
    esac
    cp "$fuzz/dict/$dict" "$OUT/$target.dict"
    printf '[libfuzzer]\ndict = %s.dict\n' "$target" > "$OUT/$target.options"
done

# The schemas, beside the fuzzers (fuzz/src/schema_dispatch.rs looks there).
pins="$repo/harness/src/schema/pins.rs"
commit="$(sed -n 's/^pub const SOURCE_COMMIT: &str = "\([0-9a-f]*\)";/\1/p' "$pins")"
[ -n "$commit" ] || { echo "build.sh: no SOURCE_COMMIT in $pins" >&2; exit 1; }
mkdir -p "$OUT/mcp-schema"
count=0
while read -r rev sum; do
    mkdir -p "$OUT/mcp-schema/$rev"
    file="$OUT/mcp-schema/$rev/schema.json"
    if [ -n "${MCPCHECK_SCHEMA_DIR:-}" ]; then
        cp "$MCPCHECK_SCHEMA_DIR/$rev/schema.json" "$file"
    else
        curl -fsSL --retry 3 -o "$file" \
            "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/$commit/schema/$rev/schema.json"
    fi
    echo "$sum  $file" | sha256sum --check --quiet
    count=$((count + 1))
done < <(sed -n 's/^ *Revision::V\([0-9]*\)_\([0-9]*\)_\([0-9]*\) => "\([0-9a-f]\{64\}\)",$/\1-\2-\3 \4/p' "$pins")
[ "$count" -gt 0 ] || { echo "build.sh: no pinned schema checksums found in $pins" >&2; exit 1; }
echo "build.sh: $(echo "$targets" | wc -w) fuzz targets and $count schemas in $OUT"
