#!/usr/bin/env bash
# The correct-server promise (issue 27.7): every third-party server, on each transport it
# speaks, passes the strictest run a user can ask for,
#   mcpcheck run --call-tools all --fail-on warning   (default revisions: each era spoken)
# except for the deviations thirdparty/FINDINGS.md documents. Those are each server's
# baseline, thirdparty/baselines/NAME.yml (--expected-failures): an unlisted failure or
# warning fails the run, and so does a listed one that no longer happens (stale), so the
# files say exactly what the servers still do wrong. Each entry's reason starts with the
# FINDINGS.md id of the deviation (harness/tests/it/correct_servers.rs checks that).
#
# Usage: bash thirdparty/strict.sh [--update] [NAME...]
#   NAME      only these runs (default: all): everything, everything-http, fastmcp,
#             mcp2-mcpserver, mcp1-fastmcp, mcp2-lowlevel, mcp2-lowlevel-http,
#             official-fixture, official-fixture-http
#   --update  rewrite each baseline from its run (--update-baseline); reasons must then be
#             written by hand, with their FINDINGS.md ids
#
# Environment: MCPCHECK (default target/debug/mcpcheck), MCPCHECK_SCHEMA_DIR, JOBS (default 4),
# PARALLEL (runs at a time, default 2), OUT_DIR (default thirdparty/out/strict).
# Exit: 0 when every run passed against its baseline; 1 otherwise; 2 for a missing setup.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="${OUT_DIR:-$here/out/strict}"
update=0
names=()
for a in "$@"; do
    case "$a" in
        --update) update=1 ;;
        -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) names+=("$a") ;;
    esac
done
(( ${#names[@]} )) || names=(official-fixture fastmcp everything-http mcp2-lowlevel mcp2-mcpserver everything
                             official-fixture-http mcp1-fastmcp mcp2-lowlevel-http)

for need in "$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
            "$here/.venv/bin/python" "$here/.venv-mcp1/bin/python"; do
    [[ -e "$need" ]] || { echo "strict.sh: $need is missing: run bash thirdparty/setup.sh" >&2; exit 2; }
done
mcpcheck="${MCPCHECK:-$repo/target/debug/mcpcheck}"
[[ -x "$mcpcheck" ]] || { echo "strict.sh: no $mcpcheck: cargo build -p mcpcheck" >&2; exit 2; }
if [[ -z "${MCPCHECK_SCHEMA_DIR:-}" ]]; then
    for d in "$repo/../shared/mcp-schema" /work/shared/mcp-schema; do
        [[ -d "$d" ]] && { MCPCHECK_SCHEMA_DIR="$(cd "$d" && pwd)"; break; }
    done
fi
[[ -d "${MCPCHECK_SCHEMA_DIR:-}" ]] || { echo "strict.sh: no schema directory: set MCPCHECK_SCHEMA_DIR" >&2; exit 2; }
export MCPCHECK_SCHEMA_DIR

files_root="$(mktemp -d "${TMPDIR:-/tmp}/mcpcheck-files.XXXXXX")"
trap 'rm -rf "$files_root"' EXIT
echo "hello from the served directory" > "$files_root/hello.txt"
py="$here/.venv/bin/python"
everything="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

# The target of run NAME: `cmd` (stdio, after --) or `serve` (an HTTP server on {port}).
target() {
    cmd=() serve=""
    case "$1" in
        everything) cmd=(node "$everything" stdio) ;;
        everything-http) serve="env PORT={port} node $everything streamableHttp" ;;
        fastmcp) cmd=("$py" "$here/fastmcp_files.py" --impl fastmcp --root "$files_root") ;;
        mcp2-mcpserver) cmd=("$py" "$here/fastmcp_files.py" --impl mcp --root "$files_root") ;;
        mcp1-fastmcp) cmd=("$here/.venv-mcp1/bin/python" "$here/fastmcp_files.py" --impl mcp --root "$files_root") ;;
        mcp2-lowlevel) cmd=("$py" "$here/mcp_sdk_server.py") ;;
        mcp2-lowlevel-http) serve="$py $here/mcp_sdk_server.py --http {port}" ;;
        official-fixture) cmd=("$py" "$here/official_fixture.py") ;;
        official-fixture-http) serve="$py $here/official_fixture.py --port {port}" ;;
        *) return 1 ;;
    esac
}

# One run: its exit code goes to $out/NAME.rc, its wall time (tenths of a second) to NAME.wall.
strict_run() {
    local name="$1" baseline="$here/baselines/$1.yml"
    target "$name"
    local args=(run --call-tools all --fail-on warning --jobs "${JOBS:-4}"
                --report "json=$out/$name.json" --expected-failures "$baseline")
    (( update )) && args+=(--update-baseline)
    if [[ -n "$serve" ]]; then args+=(--serve "$serve"); else args+=(-- "${cmd[@]}"); fi
    local t0 rc
    t0=$(date +%s%N)
    "$mcpcheck" "${args[@]}" > "$out/$name.txt" 2>&1
    rc=$?
    echo "$rc" > "$out/$name.rc"
    echo $(( ($(date +%s%N) - t0) / 100000000 )) > "$out/$name.wall"
}

mkdir -p "$out"
for name in "${names[@]}"; do
    target "$name" || { echo "strict.sh: unknown run $name" >&2; exit 2; }
    rm -f "$out/$name.rc" "$out/$name.wall"
done
# PARALLEL runs at a time (default 2): each mostly waits on its server, and a run's verdict
# does not depend on another's (its own processes, its own ports).
for name in "${names[@]}"; do
    while (( $(jobs -rp | wc -l) >= ${PARALLEL:-2} )); do wait -n; done
    strict_run "$name" &
done
wait
bad=0
printf '%-24s %4s %7s  %s\n' run exit wall_s verdict
for name in "${names[@]}"; do
    rc="$(cat "$out/$name.rc" 2>/dev/null || echo 2)"
    wall="$(cat "$out/$name.wall" 2>/dev/null || echo 0)"
    (( rc == 0 )) || bad=1
    # The matrix's verdict, or (one leg) how the run compared with its baseline.
    verdict="$(grep -E '^overall:|^baseline:' "$out/$name.txt" 2>/dev/null | tail -1)"
    [[ -n "$verdict" ]] || verdict="$(grep -E '^(PASS|FAIL)[ :]' "$out/$name.txt" 2>/dev/null | tail -1 | cut -d';' -f1)"
    printf '%-24s %4s %5s.%s  %s\n' "$name" "$rc" "$((wall / 10))" "$((wall % 10))" "$verdict"
done
echo "reports: $out"
exit "$bad"
