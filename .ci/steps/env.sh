# Sourced by every CI step (.ci/steps/list): the environment .ci/run and the GitHub workflow
# share, so a step behaves the same in both.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Tests whose prerequisite (chromium, thirdparty/.venv, python3) is missing fail when CI is
# set instead of skipping (harness/tests/it/support/require.rs); the steps install them.
# GitHub sets CI=true itself.
export CI="${CI:-1}"
# The official schemas beside the clone, where README's commands and the tests look
# (.ci/steps/schemas puts them there when they are missing), unless a directory is named.
if [ -z "${MCPCHECK_SCHEMA_DIR:-}" ] && [ -d ../shared/mcp-schema ]; then
    MCPCHECK_SCHEMA_DIR="$(cd ../shared/mcp-schema && pwd)"
    export MCPCHECK_SCHEMA_DIR
fi
