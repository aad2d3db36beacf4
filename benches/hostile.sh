#!/usr/bin/env bash
# Runs mcpcheck (default suite and revisions) against every mode of fixtures/hostile and the
# misbehaving fixture's hang-class defects (misbehaving:DEFECT), and prints, per mode, the
# exit code, the verdict counts, the wall time, mcpcheck's peak RSS, and whether a server
# process was left behind.
# Usage: benches/hostile.sh [MODE | misbehaving:DEFECT ...]
#   (env: MCPCHECK, HOSTILE, MISBEHAVING, LIMIT, JOBS)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mcpcheck=${MCPCHECK:-$root/target/debug/mcpcheck}
hostile=${HOSTILE:-$root/target/debug/mcp-hostile-server}
misbehaving=${MISBEHAVING:-$root/target/debug/mcp-misbehaving-server}
limit=${LIMIT:-120}
jobs=${JOBS:-2}
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then
  mapfile -t modes < <("$hostile" --list-modes | awk '{print $1}')
  # Conformance failures that used to hang a run: wrong ids, one method never answered,
  # answers never flushed, stdin EOF ignored.
  modes+=(misbehaving:id-mismatch misbehaving:swapped-ids misbehaving:hang
          misbehaving:unflushed-stdout misbehaving:ignore-stdin-close)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-32s %4s %8s %9s %5s  %s\n' mode exit wall_s rss_mib left summary
for mode in "${modes[@]}"; do
  marker="MCPCHECK_BENCH_MARKER=${mode#*:}-$$"
  case "$mode" in
    misbehaving:*) server=("$misbehaving" --defect "${mode#misbehaving:}") ;;
    *) server=("$hostile" --mode "$mode") ;;
  esac
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$tmp/time" timeout -k 5 "$limit" \
    "$mcpcheck" run --jobs "$jobs" --env "$marker" --report "json=$tmp/report.json" \
    -- "${server[@]}" >"$tmp/out" 2>"$tmp/err"
  code=$?
  end=$(date +%s.%N)
  sleep 0.5
  left=0
  for p in /proc/[0-9]*; do
    if { tr "\0" "\n" <"$p/environ"; } 2>/dev/null | grep -qx "$marker"; then left=$((left + 1)); kill -9 "${p#/proc/}" 2>/dev/null; fi
  done
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2/1024}' "$tmp/time")
  summary=$(grep -E 'scenarios|passed|failed|blocked' "$tmp/out" | tail -1 | tr -s ' ' | cut -c1-150)
  printf '%-32s %4s %8.1f %9s %5s  %s\n' "$mode" "$code" "$(echo "$end - $start" | bc)" "$rss" "$left" "$summary"
done
