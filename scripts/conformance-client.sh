#!/usr/bin/env bash
# The client under test for the official MCP conformance *client* suite, run by
# scripts/conformance.sh --client: the suite starts a scenario server and runs this with its URL as
# the last argument. We put `mws serve` in front of that server (its upstream), then drive one
# tools/list and tools/call through mws with the Python SDK client (.venv, mcp 2.3.0), so what the
# suite checks is mws's upstream side. Loopback only; mws is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
upstream=${!#}
# Seconds mws may live, and may take to start listening.
LIFETIME=60
START_TIMEOUT=20
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# An auth/* scenario's pre-registered client (client_id, client_secret in the context) goes into
# the upstream's `oauth`.
python3 - "$upstream" "$port" "$tmp" >"$tmp/config.json" <<'PY'
import json, os, sys
url, port, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
upstream = {"url": url}
if ctx.get("client_id"):
    upstream["oauth"] = {"clientId": ctx["client_id"],
                         **({"clientSecret": ctx["client_secret"]} if ctx.get("client_secret") else {})}
print(json.dumps({"upstream": upstream, "listen": {"host": "127.0.0.1", "port": port},
                  "stateDir": tmp + "/state"}))
PY
if [[ ${MCP_CONFORMANCE_SCENARIO:-} == auth/* ]]; then
  # The scenario's authorization endpoint approves at once: the login follows its redirect
  # itself (MWS_OAUTH_HEADLESS) instead of opening a browser, here and for a step-up in serve.
  export MWS_OAUTH_HEADLESS=1
  if ! timeout 25 target/debug/mws login upstream --config "$tmp/config.json" --timeout 10; then
    echo "mws login failed" >&2
    exit 1
  fi
fi
timeout "$LIFETIME" target/debug/mws serve --config "$tmp/config.json" --port "$port" \
  >"$tmp/mws.out" 2>"$tmp/mws.err" &
pid=$!
for _ in $(seq $((START_TIMEOUT * 10))); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/mws.err" >&2; exit 1; }
  sleep 0.1
done
status=0
.venv/bin/python - "http://127.0.0.1:$port/mcp" <<'PY' || status=$?
import json, os, sys
import anyio
from mcp import Client

SCENARIO = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
# Some scenarios name the calls they want (`toolCalls`) in a JSON context.
CONTEXT = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
# The one tool some scenario servers offer, to be called through mws.
SCENARIO_TOOL = {
    "elicitation-sep1034-client-defaults": "test_client_elicitation_defaults",
    "sse-retry": "test_reconnection",
}

async def main(url):
    async with Client(url, mode="auto") as c:
        listed = await c.list_tools()
        names = [t.name for t in listed.tools]
        print("listed through mws:", names)
        if CONTEXT.get("toolCalls"):
            # Through call_tool, which forwards any catalog tool (listed or not).
            for call in CONTEXT["toolCalls"]:
                r = await c.call_tool("call_tool", {"name": call["name"], "arguments": call.get("arguments", {})})
                print(call["name"], "through mws:", r.model_dump(by_alias=True, exclude_none=True))
        elif SCENARIO == "http-invalid-tool-headers":
            # Ask mws to call every tool the scenario server offers (found with search_tools):
            # mws must forward the valid one and refuse those with invalid x-mcp-header annotations.
            # Each with the arguments search_tools suggests (its `call_tool` template), since mws
            # checks arguments against the tool's inputSchema before sending a call.
            found = await c.call_tool("search_tools", {"query": "tool", "limit": 50})
            text = found.content[0].text
            results = sorted(json.loads(text).get("results", []), key=lambda t: t["name"])
            print("search_tools found:", [t["name"] for t in results])
            for t in results:
                name, args = t["name"], t.get("call_tool", {}).get("arguments", {})
                r = await c.call_tool("call_tool", {"name": name, "arguments": args})
                print(name, "through mws:", r.model_dump(by_alias=True, exclude_none=True))
        elif SCENARIO.startswith("auth/"):
            # The auth scenario servers offer one tool; calling it may ask for more scope.
            r = await c.call_tool("call_tool", {"name": "test-tool", "arguments": {}})
            print("test-tool through mws:", r.model_dump(by_alias=True, exclude_none=True))
        elif SCENARIO in SCENARIO_TOOL:
            name = SCENARIO_TOOL[SCENARIO]
            r = await c.call_tool("call_tool", {"name": name, "arguments": {}})
            print(name, "through mws:", r.model_dump(by_alias=True, exclude_none=True))
        elif SCENARIO == "tools_call":
            # add_numbers is not in mws's working set: call_tool forwards any catalog tool.
            r = await c.call_tool("call_tool", {"name": "add_numbers", "arguments": {"a": 2, "b": 3}})
            print("tools/call through mws:", r.model_dump(by_alias=True, exclude_none=True))
            if r.is_error:
                sys.exit("add_numbers failed through mws")
        else:
            r = await c.call_tool("search_tools", {"query": "tool"})
            print("search_tools:", r.model_dump(by_alias=True, exclude_none=True))

anyio.run(main, sys.argv[1])
PY
if [ $status -ne 0 ]; then
  echo "--- mws log" >&2
  cat "$tmp/mws.err" >&2
fi
exit $status
