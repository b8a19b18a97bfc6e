#!/usr/bin/env bash
# Installs the pinned MCP servers and the MCP inspector CLI (tests/mcp/package.json +
# package-lock.json) into DEST/node_modules with `npm ci`, once: a second run with the same
# lock file does nothing. Used by the ctest fixture mcp_npm_ci.
set -euo pipefail
SRC="$(cd "$(dirname "$0")" && pwd)"
DEST="${1:?usage: npm-install.sh DEST}"
mkdir -p "$DEST"
if [ -f "$DEST/.installed-lock" ] && cmp -s "$SRC/package-lock.json" "$DEST/.installed-lock" \
   && [ -x "$DEST/node_modules/.bin/mcp-server-everything" ]; then
  echo "npm-install: already installed in $DEST"
  exit 0
fi
command -v npm >/dev/null || { echo "npm-install: npm is missing (scripts/bootstrap installs it)" >&2; exit 1; }
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
cd "$DEST"
for attempt in 1 2 3; do
  if npm ci --no-audit --no-fund --loglevel=error; then
    cp package-lock.json .installed-lock
    echo "npm-install: installed in $DEST"
    exit 0
  fi
  echo "npm-install: npm ci failed (attempt $attempt)" >&2
  sleep $((attempt * 5))
done
exit 1
