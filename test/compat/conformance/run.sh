#!/usr/bin/env bash
# MCP conformance (@modelcontextprotocol/conformance) against `notify-mcp --http`, in both
# protocol eras the server speaks: the 2025-11-25 scenarios (initialize, sessions) and the
# 2026-07-28 ones (stateless, headers, caching), on the same endpoint.
#
# Runs the scenarios that need no fixture tools. The others ask for tools, resources,
# prompts or capabilities this server does not have (test_simple_text, resources/list,
# completion, logging, sampling, elicitation) and do not apply; docs/protocol.md lists them.
# Checks of a run scenario that cannot apply are named, with the reason, in
# expected-failures-2026-07-28.yaml: any other failure, or an entry there that starts
# passing, fails the run.
# The suite needs Node 22; this project runs on Node 20, so Node 22 comes from the npm
# package `node` into .tmp/node22 (git-ignored) the first time.
#
#   bash test/compat/conformance/run.sh            # build, serve, run every scenario below
#   SKIP_BUILD=1 bash test/compat/conformance/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."

# "<spec version> <scenario>"
SCENARIOS=(
  "2025-11-25 server-initialize"
  "2025-11-25 server-session-lifecycle"
  "2025-11-25 ping"
  "2025-11-25 tools-list"
  "2025-11-25 dns-rebinding-protection"
  "2025-11-25 server-sse-multiple-streams"
  "2026-07-28 server-stateless"
  "2026-07-28 tools-list"
  "2026-07-28 caching"
  "2026-07-28 dns-rebinding-protection"
  "2026-07-28 http-header-validation"
  "2026-07-28 server-sse-multiple-streams"
  "2026-07-28 input-required-result-unsupported-methods"
)
NODE22=.tmp/node22/node_modules/node/bin/node
CONFORMANCE=test/node_modules/@modelcontextprotocol/conformance/dist/index.js
EXPECTED_2026=test/compat/conformance/expected-failures-2026-07-28.yaml

if [ ! -x "$NODE22" ]; then
  echo "conformance: installing Node 22 into .tmp/node22"
  npm install --no-save --no-audit --no-fund --prefix .tmp/node22 node@22.23.3 >/dev/null
fi
echo "conformance: $("$NODE22" --version), $(node -p "require('./test/node_modules/@modelcontextprotocol/conformance/package.json').version")"

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
  url=$(grep -so '"msg":"serving http","url":"[^"]*"' "$work/server.log" | sed 's/.*"url":"\([^"]*\)"/\1/' || true)
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; echo "conformance: the server did not start" >&2; exit 1; fi
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log" >&2; echo "conformance: no URL logged" >&2; exit 1; }
echo "conformance: server at $url"

passed=0
failed=()
for entry in "${SCENARIOS[@]}"; do
  read -r version scenario <<<"$entry"
  name="$scenario@$version"
  args=(server --url "$url" --spec-version "$version" --scenario "$scenario")
  [ "$version" = 2026-07-28 ] && args+=(--expected-failures "$EXPECTED_2026")
  if "$NODE22" "$CONFORMANCE" "${args[@]}" >"$work/$name.txt" 2>&1; then
    passed=$((passed + 1))
    expected=$(grep -c '^  ~ ' "$work/$name.txt" || true)
    echo "conformance: $name passed ($(grep -o 'Passed: [0-9]*/[0-9]*' "$work/$name.txt" | tail -n1)$([ "$expected" -gt 0 ] && echo "; $expected not applicable, listed in $EXPECTED_2026"))"
  else
    failed+=("$name")
    echo "conformance: $name FAILED"
    cat "$work/$name.txt"
  fi
done

kill -TERM "$server_pid"
if ! wait "$server_pid"; then echo "conformance: the server did not exit cleanly" >&2; cat "$work/server.log" >&2; failed+=(shutdown); fi
server_pid=

echo "conformance: scenarios ok ${passed}, failing ${#failed[@]}"
[ "${#failed[@]}" -eq 0 ]
