#!/usr/bin/env bash
# Runs mcpcheck against every third-party server at every handshake revision and prints
# a compact table. Reports (JSON and the human text) go to thirdparty/out/.
#
# Usage: bash thirdparty/run.sh [-s SERVER]... [-r REVISION]... [--strict]
#   -s SERVER     only this server (repeatable): everything, fastmcp, mcp2-mcpserver,
#                 mcp1-fastmcp, mcp2-lowlevel
#   -r REVISION   only this revision (repeatable): 2024-11-05 2025-03-26 2025-06-18 2025-11-25
#   --strict      also exit non-zero when any run reports a failure-level finding
#
# Environment:
#   MCPCHECK              mcpcheck binary (default: target/debug/mcpcheck, built if missing)
#   MCPCHECK_SCHEMA_DIR   schema directory (default: ../shared/mcp-schema beside the repo,
#                         else /work/shared/mcp-schema)
#   MCPCHECK_ARGS         extra arguments for every `mcpcheck run` (split on spaces),
#                         e.g. "--timeout 30s --shutdown-wait 5s" on a slow machine
#   RUN_TIMEOUT           wall-clock limit for one mcpcheck run, seconds (default 120)
#   OUT_DIR               where reports go (default thirdparty/out)
#
# Exit: 0 when every run finished (mcpcheck exit 0 or 1) within RUN_TIMEOUT and left no
# process behind; 1 otherwise (or, with --strict, when any run had failures);
# 2 for usage errors or a missing setup (run thirdparty/setup.sh first).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="${OUT_DIR:-$here/out}"

servers=()
revisions=()
strict=0
while (( $# )); do
    case "$1" in
        -s) servers+=("$2"); shift 2 ;;
        -r) revisions+=("$2"); shift 2 ;;
        --strict) strict=1; shift ;;
        -h|--help) sed -n '2,28p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
(( ${#servers[@]} )) || servers=(everything fastmcp mcp2-mcpserver mcp1-fastmcp mcp2-lowlevel)
(( ${#revisions[@]} )) || revisions=(2024-11-05 2025-03-26 2025-06-18 2025-11-25)

# --- prerequisites ---------------------------------------------------------------------
for need in "$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
            "$here/.venv/bin/python" "$here/.venv-mcp1/bin/python"; do
    [[ -e "$need" ]] || { echo "run.sh: $need is missing: run bash thirdparty/setup.sh" >&2; exit 2; }
done

mcpcheck="${MCPCHECK:-$repo/target/debug/mcpcheck}"
if [[ ! -x "$mcpcheck" ]]; then
    echo "run.sh: building mcpcheck" >&2
    (cd "$repo" && cargo build -q -p mcpcheck) || exit 2
fi
if [[ -z "${MCPCHECK_SCHEMA_DIR:-}" ]]; then
    for d in "$repo/../shared/mcp-schema" /work/shared/mcp-schema; do
        [[ -d "$d" ]] && { MCPCHECK_SCHEMA_DIR="$(cd "$d" && pwd)"; break; }
    done
fi
[[ -d "${MCPCHECK_SCHEMA_DIR:-}" ]] || { echo "run.sh: no schema directory: set MCPCHECK_SCHEMA_DIR" >&2; exit 2; }
export MCPCHECK_SCHEMA_DIR
timeout_s="${RUN_TIMEOUT:-120}"

# The file servers get a scratch directory with one file in it.
files_root="$(mktemp -d "${TMPDIR:-/tmp}/mcpcheck-files.XXXXXX")"
trap 'rm -rf "$files_root"' EXIT
echo "hello from the served directory" > "$files_root/hello.txt"

mkdir -p "$out"
pyver() { "$here/$1/bin/python" -c "from importlib.metadata import version; print(version('$2'))"; }
everything_ver="$(node -p "require('$here/node_modules/@modelcontextprotocol/server-everything/package.json').version")"

# name | version label | command...
server_cmd() {
    case "$1" in
        everything) echo "server-everything@$everything_ver"; cmd=(node "$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio) ;;
        fastmcp) echo "fastmcp@$(pyver .venv fastmcp) (mcp $(pyver .venv mcp))"; cmd=("$here/.venv/bin/python" "$here/fastmcp_files.py" --impl fastmcp --root "$files_root") ;;
        mcp2-mcpserver) echo "mcp@$(pyver .venv mcp) MCPServer"; cmd=("$here/.venv/bin/python" "$here/fastmcp_files.py" --impl mcp --root "$files_root") ;;
        mcp1-fastmcp) echo "mcp@$(pyver .venv-mcp1 mcp) FastMCP"; cmd=("$here/.venv-mcp1/bin/python" "$here/fastmcp_files.py" --impl mcp --root "$files_root") ;;
        mcp2-lowlevel) echo "mcp@$(pyver .venv mcp) lowlevel"; cmd=("$here/.venv/bin/python" "$here/mcp_sdk_server.py") ;;
        *) return 1 ;;
    esac
}

# Processes still carrying this run's tag in their environment: left behind by mcpcheck.
leftovers() {
    local tag="$1" pids=() p
    for p in /proc/[0-9]*; do
        grep -qsa "MCPCHECK_THIRDPARTY_RUN=$tag" "$p/environ" 2>/dev/null && pids+=("${p#/proc/}")
    done
    echo "${pids[*]:-}"
}

summary() { # report.json -> "negotiated fail warn info rules"
    python3 - "$1" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    r = r["legs"][0] if "legs" in r else r  # report format 2: one run per --protocol-version leg
except Exception:
    print("- - - - -"); sys.exit()
c = r.get("counts", {})
rules = sorted({f["rule"] for f in r.get("findings", []) if f.get("severity") != "info"})
print(r.get("revision", "-"), c.get("failures", "-"), c.get("warnings", "-"), c.get("infos", "-"), ",".join(rules) or "-")
EOF
}

bad=0
rows=()
fmt="%-34s %-10s %-10s %4s %4s %4s %4s %6s %5s  %s\n"
for s in "${servers[@]}"; do
    label="$(server_cmd "$s")" || { echo "run.sh: unknown server $s" >&2; exit 2; }
    server_cmd "$s" >/dev/null   # sets cmd in this shell
    for rev in "${revisions[@]}"; do
        tag="$s-$rev-$$-$RANDOM"
        json="$out/$s-$rev.json"
        rm -f "$json"
        t0=$(date +%s%N)
        MCPCHECK_THIRDPARTY_RUN="$tag" timeout -k 5 "$timeout_s" "$mcpcheck" run \
            --protocol-version "$rev" --format json --output "$json" ${MCPCHECK_ARGS:-} \
            -- "${cmd[@]}" > "$out/$s-$rev.txt" 2>&1
        rc=$?
        wall=$(( ($(date +%s%N) - t0) / 1000000 ))
        sleep 0.2
        left="$(leftovers "$tag")"
        read -r neg fail warn info rules <<< "$(summary "$json")"
        note=""
        if (( rc == 124 || rc == 137 )); then note=" TIMEOUT"; bad=1; fi
        if (( rc >= 2 && rc != 124 && rc != 137 )); then note=" HARNESS-ERROR"; bad=1; fi
        if [[ -n "$left" ]]; then note="$note LEFT:$left"; bad=1; fi
        if (( strict && rc == 1 )); then bad=1; fi
        rows+=("$(printf "$fmt" "$label" "$rev" "$neg" "$rc" "$fail" "$warn" "$info" "${wall}ms" "$([[ -n $left ]] && echo yes || echo no)" "$rules$note")")
        printf '.' >&2
    done
done
echo >&2
printf "$fmt" "server" "requested" "negotiated" "exit" "fail" "warn" "info" "wall" "left" "rules (failures and warnings)"
printf '%s\n' "${rows[@]}"
echo "reports: $out"
exit "$bad"
