#!/usr/bin/env bash
# Exchange latency over Streamable HTTP (issue 28): for each server stack, one leg of
# `mcpcheck run --url` (2025-11-25), the wall time, and the median and 90th percentile of the
# time from a request's POST to its response, read from the report's transcripts.
#
# Usage: benches/http_latency.sh [STACK...]
#   STACK   stdlib (benches/stdlib_http_server.py), uvicorn (thirdparty/mcp_sdk_server.py
#           --http: the mcp SDK on Starlette/uvicorn), everything (Node server-everything,
#           streamableHttp); default: all three
# Environment: MCPCHECK (the binary, default target/release/mcpcheck, else target/debug),
#              MCPCHECK_SCHEMA_DIR (default ../shared/mcp-schema), RUNS (default 3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
stacks=("$@")
(( ${#stacks[@]} )) || stacks=(stdlib uvicorn everything)
runs="${RUNS:-3}"
mcpcheck="${MCPCHECK:-$repo/target/release/mcpcheck}"
[[ -x "$mcpcheck" ]] || mcpcheck="$repo/target/debug/mcpcheck"
[[ -x "$mcpcheck" ]] || { echo "http_latency.sh: build mcpcheck first" >&2; exit 2; }
export MCPCHECK_SCHEMA_DIR="${MCPCHECK_SCHEMA_DIR:-$repo/../shared/mcp-schema}"
py="$repo/thirdparty/.venv/bin/python"
everything="$repo/thirdparty/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
out="$(mktemp -d "${TMPDIR:-/tmp}/mcpcheck-latency.XXXXXX")"
trap 'rm -rf "$out"' EXIT

serve() {
    case "$1" in
        stdlib) echo "python3 $here/stdlib_http_server.py {port}" ;;
        uvicorn) echo "$py $repo/thirdparty/mcp_sdk_server.py --http {port}" ;;
        everything) echo "env PORT={port} node $everything streamableHttp" ;;
        *) echo "http_latency.sh: unknown stack $1" >&2; exit 2 ;;
    esac
}

printf '%-11s %4s %8s %10s %10s %9s\n' stack run wall_s median_ms p90_ms exchanges
for stack in "${stacks[@]}"; do
    for run in $(seq "$runs"); do
        report="$out/$stack-$run.json"
        start=$(date +%s.%N)
        "$mcpcheck" run --serve "$(serve "$stack")" --protocol-version 2025-11-25 \
            --report "json=$report" >/dev/null 2>&1 || true
        end=$(date +%s.%N)
        python3 - "$report" "$stack" "$run" "$start" "$end" <<'EOF'
import json, statistics, sys
path, stack, run, start, end = sys.argv[1:]
report = json.load(open(path))
report = report["legs"][0] if "legs" in report else report
gaps = []
for scenario in [report] + report.get("scenarios", []):
    sent = {}
    for entry in scenario.get("transcript", []):
        try:
            message = json.loads(entry["text"])
        except (ValueError, KeyError):
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue
        key = json.dumps(message["id"])
        if entry["direction"] == "sent" and "method" in message:
            sent[key] = entry["at"]
        elif entry["direction"] == "received" and key in sent:
            gaps.append(entry["at"] - sent.pop(key))
gaps.sort()
p90 = gaps[int(len(gaps) * 0.9)] if gaps else float("nan")
median = statistics.median(gaps) if gaps else float("nan")
print(f"{stack:<11} {run:>4} {float(end) - float(start):8.2f} {median:10.1f} {p90:10.1f} {len(gaps):9}")
EOF
    done
done
