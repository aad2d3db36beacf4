#!/bin/sh
# Installs a released mcpcheck binary: picks the archive for this OS and CPU, downloads it
# with its SHA-256, verifies it, and puts `mcpcheck` in $MCPCHECK_INSTALL_DIR (default
# ~/.local/bin). Attached to every release as mcpcheck-installer.sh:
#
#   curl -fsSL https://github.com/mcpcheck/mcpcheck/releases/latest/download/mcpcheck-installer.sh | sh
#   curl -fsSL .../download/v0.1.0/mcpcheck-installer.sh | MCPCHECK_VERSION=v0.1.0 sh
#
# Environment: MCPCHECK_VERSION (a tag such as v0.1.0; default: the latest release),
# MCPCHECK_SHA256 (the archive's SHA-256 as you pinned it: then the release's own .sha256
# file is not trusted, so a release whose archive and checksum were both replaced is
# refused), MCPCHECK_INSTALL_DIR, MCPCHECK_DOWNLOAD_BASE (a mirror of the release
# downloads, with `latest/download` and `download/<tag>` beneath it). The GitHub Action
# (.github/actions/mcpcheck) installs with this script.
set -eu

repo="mcpcheck/mcpcheck"
base="${MCPCHECK_DOWNLOAD_BASE:-https://github.com/$repo/releases}"
version="${MCPCHECK_VERSION:-latest}"
dest="${MCPCHECK_INSTALL_DIR:-$HOME/.local/bin}"

say() { printf 'mcpcheck-installer: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

case "$(uname -s)" in
    Linux) os=unknown-linux-musl ;;
    Darwin) os=apple-darwin ;;
    *) die "no prebuilt binary for $(uname -s); build from source: cargo install mcpcheck" ;;
esac
case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) die "no prebuilt binary for $(uname -m); build from source: cargo install mcpcheck" ;;
esac
name="mcpcheck-$arch-$os"
if [ "$version" = latest ]; then
    url="$base/latest/download"
else
    url="$base/download/$version"
fi

if command -v curl >/dev/null 2>&1; then
    fetch() { curl --proto '=https,http' -fsSL "$1" -o "$2"; }
elif command -v wget >/dev/null 2>&1; then
    fetch() { wget -q "$1" -O "$2"; }
else
    die "needs curl or wget"
fi
if command -v sha256sum >/dev/null 2>&1; then
    digest() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
    digest() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
    die "needs sha256sum or shasum to verify the download"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
say "downloading $name ($version)"
fetch "$url/$name.tar.gz" "$tmp/$name.tar.gz" || die "downloading $url/$name.tar.gz failed"
if [ -n "${MCPCHECK_SHA256:-}" ]; then
    expected="$MCPCHECK_SHA256"
else
    fetch "$url/$name.tar.gz.sha256" "$tmp/$name.tar.gz.sha256" || die "downloading the checksum failed"
    expected="$(cut -d ' ' -f 1 < "$tmp/$name.tar.gz.sha256")"
fi
actual="$(digest "$tmp/$name.tar.gz")"
[ -n "$expected" ] && [ "$expected" = "$actual" ] \
    || die "checksum mismatch for $name.tar.gz (expected $expected, got $actual); nothing installed"
tar -xzf "$tmp/$name.tar.gz" -C "$tmp"
mkdir -p "$dest"
install -m 755 "$tmp/$name/mcpcheck" "$dest/mcpcheck" 2>/dev/null \
    || { cp "$tmp/$name/mcpcheck" "$dest/mcpcheck" && chmod 755 "$dest/mcpcheck"; }
say "installed $("$dest/mcpcheck" --version) to $dest/mcpcheck (sha256 verified)"
case ":$PATH:" in
    *":$dest:"*) ;;
    *) say "note: $dest is not on PATH" ;;
esac
