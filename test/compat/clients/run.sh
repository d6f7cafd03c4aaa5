#!/usr/bin/env bash
# Real MCP clients against the built notify-mcp, from their own install (this folder's
# package.json and lockfile, out of the server's). The clients need Node 22 (from the npm
# package `node`, in .tmp/node22, as the conformance run); the server runs on the Node 20
# that built it.
#   bash test/compat/clients/run.sh [--update]     (SKIP_BUILD=1 to use dist/ as it is)
set -euo pipefail
cd "$(dirname "$0")/../../.."
NODE22=.tmp/node22/node_modules/node/bin/node
if [ ! -x "$NODE22" ]; then
  echo "clients: installing Node 22 into .tmp/node22"
  npm install --no-save --no-audit --no-fund --prefix .tmp/node22 node@22.23.3 >/dev/null
fi
npm ci --prefix test/compat/clients --no-audit --no-fund --loglevel=error >/dev/null
[ "${SKIP_BUILD:-}" = 1 ] || npm run build >/dev/null
NOTIFY_SERVER_NODE="$(command -v node)" "$NODE22" test/compat/clients/run.mjs "$@"
