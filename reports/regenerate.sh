#!/usr/bin/env bash
# Regenerates the example reports in reports/ from the bundled fixtures, with
# --deterministic so that the same code gives the same bytes. CI runs this and fails on
# `git diff --exit-code reports/`: a change to a reporter or to the suite shows up as a diff
# to review. Run from anywhere after `cargo build --workspace`:
#   bash reports/regenerate.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

MCPCHECK="${MCPCHECK:-target/debug/mcpcheck}"
export MCPCHECK_SCHEMA_DIR="${MCPCHECK_SCHEMA_DIR:-$(cd ../shared/mcp-schema && pwd)}"
export NO_COLOR=1

# example NAME EXPECTED_EXIT SERVER...: runs the whole suite against SERVER and writes all
# five reports to reports/NAME/.
example() {
    local name="$1" expected="$2"
    shift 2
    local dir="reports/$name"
    rm -rf "$dir"
    mkdir -p "$dir"
    local code=0
    # Left out, because their transcripts are races by design and so not reproducible:
    # stdio/burst-1000-requests (how many of 1000 answers land in its window) and
    # notifications/cancel-in-flight and notifications/server-cancel-own-request (whether the
    # answer beats the cancellation); and
    # robustness/memory-per-request, a measurement (resident memory) over 2,000 requests.
    "$MCPCHECK" run --deterministic --jobs 2 \
        --exclude stdio/burst-1000-requests --exclude notifications/cancel-in-flight \
        --exclude notifications/server-cancel-own-request \
        --exclude robustness/memory-per-request \
        --report "html=$dir/report.html" \
        --report "junit=$dir/junit.xml" \
        --report "json=$dir/results.json" \
        --report "markdown=$dir/summary.md" \
        --report "sarif=$dir/results.sarif" \
        -- "$@" >/dev/null || code=$?
    if [ "$code" != "$expected" ]; then
        echo "reports/regenerate.sh: $name: mcpcheck exited $code, expected $expected" >&2
        exit 1
    fi
    echo "reports/$name: written (exit $code)"
}

example reference 0 target/debug/mcp-reference-server
example misbehaving-garbage-stdout 1 target/debug/mcp-misbehaving-server --defect garbage-stdout
