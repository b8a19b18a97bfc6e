#!/usr/bin/env bash
# `ufo mcp tools` against the real server-everything and scripted broken servers: the list as
# the agents show it, a broken schema named, a failed server with its reason, the HostAgent's
# servers (--agent HOST_AGENT), exit statuses.
set -uo pipefail
UFO="$UFO_BUILD_DIR/cli/ufo"
SCRIPTED="$UFO_SOURCE_DIR/tests/mcp/scripted_server.js"
DIR=$(mktemp -d /tmp/ufo_mcp_cli.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fail=0
check() { if ! grep -qF -- "$2" "$1"; then echo "FAIL: $1 lacks: $2"; sed 's/^/    /' "$1" | head -40; fail=1; fi; }
cat > "$DIR/cfg.json" <<JSON
{"MCP_TOOL_TIMEOUT": 5, "MCP_SERVERS": {"APP_AGENT": {
  "*": [{"name": "every", "command": "$UFO_MCP_BIN/mcp-server-everything"}],
  "mousepad": [{"name": "odd", "command": "node", "args": ["$SCRIPTED", "schema"]},
               {"name": "quitter", "command": "node", "args": ["$SCRIPTED", "exit"]}]},
  "HOST_AGENT": {"*": [{"name": "hostnotes", "command": "node", "args": ["$SCRIPTED", "schema"]}]}}}
JSON
"$UFO" mcp tools --config "$DIR/cfg.json" --server every > "$DIR/every.txt"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --server every exited $rc"; fail=1; }
check "$DIR/every.txt" "APP_AGENT / *"
check "$DIR/every.txt" "every: ready, protocol 2025-06-18"
check "$DIR/every.txt" "every.echo"
check "$DIR/every.txt" "args: message: string (required)"
"$UFO" mcp tools --config "$DIR/cfg.json" --app mousepad > "$DIR/app.txt"; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a failed server must give exit 1, got $rc"; fail=1; }
check "$DIR/app.txt" "APP_AGENT / mousepad"
check "$DIR/app.txt" "BROKEN SCHEMA: the input schema at inputSchema is not an object"
check "$DIR/app.txt" "quitter: failed"
check "$DIR/app.txt" "exited with status 3 (its last words: scripted_server: cannot start, configuration missing)"
"$UFO" mcp tools --config "$DIR/cfg.json" --app mousepad --server odd --json > "$DIR/odd.json"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --server odd --json exited $rc"; fail=1; }
check "$DIR/odd.json" '"function": "odd.good"'
check "$DIR/odd.json" '"args": "text: string - the text"'
# the HostAgent's servers, with --agent
"$UFO" mcp tools --config "$DIR/cfg.json" --agent HOST_AGENT > "$DIR/host.txt"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --agent HOST_AGENT exited $rc"; fail=1; }
check "$DIR/host.txt" "HOST_AGENT"
check "$DIR/host.txt" "hostnotes.good"
if grep -q "every.echo" "$DIR/host.txt"; then echo "FAIL: the AppAgent's servers listed for HOST_AGENT"; fail=1; fi
"$UFO" mcp tools --config "$DIR/cfg.json" --server nobody 2> "$DIR/none.txt"; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: an unknown server must give exit 2, got $rc"; fail=1; }
check "$DIR/none.txt" "no MCP server named nobody"
echo '{"MCP_SERVERS": {"APP_AGENT": {"*": [{"name": "x"}]}}}' > "$DIR/bad.json"
"$UFO" mcp tools --config "$DIR/bad.json" 2> "$DIR/bad.txt"; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a bad configuration must give exit 1, got $rc"; fail=1; }
check "$DIR/bad.txt" 'MCP_SERVERS.APP_AGENT.*[0]: "command" is required'
[ $fail -eq 0 ] && echo "test_mcp_cli: passed"
exit $fail
