#!/usr/bin/env bash
# The default suite against real servers, with a server per scenario (--isolate, the old
# behaviour) and with shared sessions (the default), next to ten cold starts of the same
# server (start, initialize, notifications/initialized, end of input, exit), measured right
# before and right after each run and averaged: wall and CPU time (mcpcheck and every
# server it started), the exit code, the scenario counts, and whether both modes gave the
# same verdict for every scenario.
#
# Usage: benches/suite.sh [SERVER...]   servers: reference python-sdk fastmcp everything
# Env: MCPCHECK (default target/debug/mcpcheck), JOBS (default 2), MCPCHECK_ARGS (extra
#      arguments for every run), MODES (default "isolate shared"; the verdict comparison needs
#      both), MCPCHECK_SCHEMA_DIR (default /work/shared/mcp-schema or
#      ../shared/mcp-schema). The Python servers need thirdparty/setup.sh (thirdparty/.venv);
#      server-everything needs its npm install (thirdparty/node_modules).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mcpcheck=${MCPCHECK:-$root/target/debug/mcpcheck}
jobs=${JOBS:-2}
if [ -z "${MCPCHECK_SCHEMA_DIR:-}" ]; then
  for d in "$root/../shared/mcp-schema" /work/shared/mcp-schema; do
    [ -d "$d" ] && export MCPCHECK_SCHEMA_DIR=$d && break
  done
fi
servers=("$@")
[ ${#servers[@]} -eq 0 ] && servers=(reference python-sdk fastmcp everything)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tp=$root/thirdparty

command_for() {
  case "$1" in
    reference) echo "$root/target/debug/mcp-reference-server" ;;
    python-sdk) echo "$tp/.venv/bin/python $tp/mcp_sdk_server.py" ;;
    fastmcp) mkdir -p "$tmp/files" && echo "$tp/.venv/bin/python $tp/fastmcp_files.py --impl fastmcp --root $tmp/files" ;;
    everything) echo "node $tp/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio" ;;
    *) echo "unknown server $1" >&2; return 2 ;;
  esac
}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
note='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# Ten cold starts: wall seconds for all ten (each ends when the server exits after its input closes).
cold10() {
  local cmd=$1 start end
  start=$(date +%s.%N)
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    # shellcheck disable=SC2086
    { printf '%s\n%s\n' "$init" "$note"; sleep 0.05; } | timeout -k 2 20 $cmd >/dev/null 2>&1
  done
  end=$(date +%s.%N)
  echo "$end - $start - 0.5" | bc
}

# One run: prints "exit wall cpu summary" and leaves the JSON report in $tmp/$2.json.
one_run() {
  local cmd=$1 tag=$2; shift 2
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$mcpcheck" run --jobs "$jobs" ${MCPCHECK_ARGS:-} "$@" \
    --report "json=$tmp/$tag.json" -- $cmd >"$tmp/$tag.out" 2>&1
  local code=$?
  # The last line: GNU time puts "Command exited with non-zero status N" before it.
  read -r wall user sys < <(tail -1 "$tmp/time")
  local summary
  summary=$(grep -oE 'scenarios: .*' "$tmp/$tag.out" | tail -1 | cut -d';' -f1 | sed 's/scenarios: //')
  printf '%s %s %s %s' "$code" "$wall" "$(echo "$user + $sys" | bc)" "${summary:-?}"
}

# Every scenario's verdict, per leg (a run of two legs has its scenarios under "legs").
verdicts() {
  python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
legs = r.get("legs") or [r]
print(json.dumps({l["revision"] + " " + s["id"]: s["verdict"] for l in legs for s in l["scenarios"]}, sort_keys=True))' "$1" 2>/dev/null
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, --jobs $jobs"
printf '%-11s %8s | %-9s %4s %7s %7s %6s | %s\n' server cold10_s mode exit wall_s cpu_s ratio scenarios
for server in "${servers[@]}"; do
  cmd=$(command_for "$server") || continue
  for mode in ${MODES:-isolate shared}; do
    flag=(); [ "$mode" = isolate ] && flag=(--isolate)
    # Ten cold starts right before and right after the run, averaged: on a shared or
    # virtual machine the speed drifts within minutes (ten Python cold starts took from
    # 7.7 s to 11.6 s within ten minutes here), and the ratio is only fair at one speed.
    before=$(cold10 "$cmd")
    read -r code wall cpu summary <<<"$(one_run "$cmd" "$server-$mode" "${flag[@]}")"
    after=$(cold10 "$cmd")
    cold=$(echo "scale=2; ($before + $after) / 2" | bc)
    ratio=$(echo "scale=2; $wall / $cold" | bc)
    printf '%-11s %8.2f | %-9s %4s %7.1f %7.1f %6s | %s\n' "$server" "$cold" "$mode" "$code" "$wall" "$cpu" "$ratio" "$summary"
  done
  if [ ! -f "$tmp/$server-isolate.json" ] || [ ! -f "$tmp/$server-shared.json" ]; then
    echo "$server: one mode only, verdicts not compared"
  elif [ "$(verdicts "$tmp/$server-isolate.json")" = "$(verdicts "$tmp/$server-shared.json")" ]; then
    echo "$server: every scenario has the same verdict in both modes"
  else
    echo "$server: VERDICTS DIFFER between --isolate and shared sessions"
  fi
  if [ -n "${KEEP:-}" ]; then cp "$tmp/$server-isolate.json" "$tmp/$server-shared.json" "$KEEP/"; fi
done
