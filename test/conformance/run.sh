#!/usr/bin/env bash
# MCP conformance (@modelcontextprotocol/conformance) against `notify-mcp --http`.
#
# Runs the scenarios that need no fixture tools. The others ask for tools, resources,
# prompts or capabilities this server does not have (test_simple_text, resources/list,
# completion, logging, sampling, elicitation) and do not apply.
# The suite needs Node 22; this project runs on Node 20, so Node 22 comes from the npm
# package `node` into .tmp/node22 (git-ignored) the first time.
#
#   bash test/conformance/run.sh            # build, serve, run every scenario below
#   SKIP_BUILD=1 bash test/conformance/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection server-sse-multiple-streams)
NODE22=.tmp/node22/node_modules/node/bin/node
CONFORMANCE=node_modules/@modelcontextprotocol/conformance/dist/index.js

if [ ! -x "$NODE22" ]; then
  echo "conformance: installing Node 22 into .tmp/node22"
  npm install --no-save --no-audit --no-fund --prefix .tmp/node22 node@22.23.3 >/dev/null
fi
echo "conformance: $("$NODE22" --version), $(node -p "require('./node_modules/@modelcontextprotocol/conformance/package.json').version")"

if [ "${SKIP_BUILD:-}" != 1 ]; then npm run build >/dev/null; fi

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A clean environment: no tokens (the suite speaks without auth, so loopback only), no
# DATABASE_URL, a fresh data dir. Port 0: the server picks a free port and logs its URL.
env -i PATH="$PATH" HOME="$work" NOTIFY_DATA_DIR="$work/data" \
  node dist/cli.js --http --host 127.0.0.1 --port 0 2>"$work/server.log" &
server_pid=$!

url=
for _ in $(seq 1 100); do
  url=$(grep -o '"msg":"serving http","url":"[^"]*"' "$work/server.log" | sed 's/.*"url":"\([^"]*\)"/\1/' || true)
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; echo "conformance: the server did not start" >&2; exit 1; fi
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log" >&2; echo "conformance: no URL logged" >&2; exit 1; }
echo "conformance: server at $url"

passed=0
failed=()
for scenario in "${SCENARIOS[@]}"; do
  if "$NODE22" "$CONFORMANCE" server --url "$url" --scenario "$scenario" >"$work/$scenario.txt" 2>&1; then
    passed=$((passed + 1))
    echo "conformance: $scenario passed ($(grep -o 'Passed: [0-9]*/[0-9]*' "$work/$scenario.txt" | tail -n1))"
  else
    failed+=("$scenario")
    echo "conformance: $scenario FAILED"
    cat "$work/$scenario.txt"
  fi
done

kill -TERM "$server_pid"
if ! wait "$server_pid"; then echo "conformance: the server did not exit cleanly" >&2; cat "$work/server.log" >&2; failed+=(shutdown); fi
server_pid=

echo "conformance: scenarios ok ${passed}, failing ${#failed[@]}"
[ "${#failed[@]}" -eq 0 ]
