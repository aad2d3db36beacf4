#!/usr/bin/env bash
# The run step of the mcpcheck action: one `mcpcheck run` (or, with MODE=client, one
# `mcpcheck client`) per revision, reports under $DIR/<revision>/, the Markdown summaries
# to the job summary, and the outputs. Inputs come from the environment (MODE, CLIENT,
# CLIENT_TRANSPORT, SERVER, URL, SERVE, REVISIONS, FAIL_ON, BASELINE, REPORTS, ARGS, DIR);
# .ci/action-check runs it here against the fixtures.
set -uo pipefail

die() { echo "::error::$*"; echo "verdict=error" >> "$GITHUB_OUTPUT"; echo "exit-code=2" >> "$GITHUB_OUTPUT"; exit 0; }

MODE="${MODE:-server}"
case "$MODE" in
    server)
        if [ -n "${CLIENT:-}" ]; then die "mcpcheck: client is for mode client"; fi
        if [ -n "$SERVER" ] && [ -n "$URL" ]; then die "mcpcheck: give server or url, not both"; fi
        if [ -z "$SERVER" ] && [ -z "$URL" ]; then die "mcpcheck: give server (a stdio command) or url"; fi
        ;;
    client)
        if [ -z "${CLIENT:-}" ]; then die "mcpcheck: mode client needs client (the client's command)"; fi
        if [ -n "$SERVER" ] || [ -n "$URL" ]; then die "mcpcheck: mode client takes client, not server or url"; fi
        ;;
    *) die "mcpcheck: mode must be server or client, not '$MODE'" ;;
esac
if [ -n "$SERVE" ] && [ -z "$URL" ]; then die "mcpcheck: serve needs url"; fi
case "$FAIL_ON" in failure | warning | never) ;; *) die "mcpcheck: fail-on must be failure, warning or never, not '$FAIL_ON'" ;; esac

served=""
stop() { if [ -n "$served" ]; then kill "$served" 2>/dev/null; wait "$served" 2>/dev/null; fi; }
trap stop EXIT
if [ -n "$SERVE" ]; then
    bash -c "$SERVE" &
    served=$!
    hostport="${URL#*://}"
    hostport="${hostport%%/*}"
    ready=""
    for _ in $(seq 300); do
        if (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null; then ready=1; break; fi
        kill -0 "$served" 2>/dev/null || die "mcpcheck: the serve command exited before $hostport accepted connections"
        sleep 0.1
    done
    [ -n "$ready" ] || die "mcpcheck: nothing accepted connections on $hostport within 30 s of starting the serve command"
fi

extra=()
if [ -n "$ARGS" ]; then
    # shellcheck disable=SC2206 # word splitting of the user's extra arguments is intended
    extra=($ARGS)
fi
if [ -n "$BASELINE" ]; then extra+=(--expected-failures "$BASELINE"); fi
if [ "$MODE" = client ]; then
    target=(client --command "$CLIENT" --transport "${CLIENT_TRANSPORT:-http}")
elif [ -n "$URL" ]; then
    target=(run --url "$URL")
else
    target=(run --server "$SERVER")
fi

worst=0 failures=0 warnings=0 passed=0 failed=0 jsons=() sarifs=()
for rev in ${REVISIONS//,/ }; do
    out="$DIR/$rev"
    reports=(--report "json=$out/results.json" --report "markdown=$out/summary.md")
    for kind in ${REPORTS//,/ }; do
        case "$kind" in
            html) reports+=(--report "html=$out/report.html") ;;
            junit) reports+=(--report "junit=$out/junit.xml") ;;
            sarif) reports+=(--report "sarif=$out/results.sarif"); sarifs+=("$out/results.sarif") ;;
            json | markdown) ;;
            *) die "mcpcheck: unknown report kind '$kind' (html, junit, json, markdown, sarif)" ;;
        esac
    done
    mcpcheck "${target[@]}" --protocol-version "$rev" "${reports[@]}" ${extra[@]+"${extra[@]}"}
    code=$?
    [ "$code" -gt "$worst" ] && worst=$code
    jsons+=("$out/results.json")
    if [ -f "$out/summary.md" ]; then
        { echo "### revision $rev"; cat "$out/summary.md"; echo; } >> "$GITHUB_STEP_SUMMARY"
    fi
    if [ -f "$out/results.json" ]; then
        read -r f w p s < <(python3 -c '
import json, sys
f = w = p = s = 0
for r in json.load(open(sys.argv[1]))["legs"]:  # format 2: a leg per revision
    if "not_spoken" in r:
        continue
    t = r["tally"]
    f += r["counts"]["failures"] + t["fail"]; w += r["counts"]["warnings"] + t["warn"]
    p += t["pass"]; s += t["fail"]
print(f, w, p, s)
' "$out/results.json") || { f=0 w=0 p=0 s=0; worst=2; }
        failures=$((failures + f)) warnings=$((warnings + w)) passed=$((passed + p)) failed=$((failed + s))
    fi
done

case "$worst" in 0) verdict=pass ;; 1) verdict=fail ;; *) verdict=error ;; esac
{
    echo "verdict=$verdict"
    echo "exit-code=$worst"
    echo "failures=$failures"
    echo "warnings=$warnings"
    echo "scenarios-passed=$passed"
    echo "scenarios-failed=$failed"
    echo "report-dir=$DIR"
    echo "json-reports=${jsons[*]}"
    echo "sarif-reports=${sarifs[*]}"
} >> "$GITHUB_OUTPUT"
exit 0
