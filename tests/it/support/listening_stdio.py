"""A 2026-07-28 stdio MCP server whose tool list grows, and which says so only on a
`subscriptions/listen`, as the 2026 revision has it: `notifications/tools/list_changed` goes to
the open listen that asked for `toolsListChanged`, tagged with its subscription id, and nowhere
else. Its tool `grow` adds the tool `grown`. Every listen it hears and every cancellation is noted
on stderr (the proxy logs the child's stderr).
"""
import json
import sys

VERSION = "2026-07-28"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
tools = [{"name": "grow", "description": "Add the tool grown", "inputSchema": {"type": "object"}}]
listening = None  # the id of the open listen that wants toolsListChanged


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(mid, body):
    body.setdefault("resultType", "complete")
    send({"jsonrpc": "2.0", "id": mid, "result": body})


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "notifications/cancelled":
        if params.get("requestId") == listening:
            sys.stderr.write(f"listen {listening} cancelled\n")
            sys.stderr.flush()
            listening = None
        continue
    if mid is None:
        continue
    if method == "server/discover":
        result(mid, {"supportedVersions": [VERSION],
                     "capabilities": {"tools": {"listChanged": True}},
                     "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "listening", "version": "0.1"}},
                     "ttlMs": 0, "cacheScope": "private"})
    elif method == "subscriptions/listen":
        wanted = params.get("notifications", {})
        sys.stderr.write(f"listen {mid} for {sorted(wanted)}\n")
        sys.stderr.flush()
        if wanted.get("toolsListChanged"):
            listening = mid
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"_meta": {SUB_ID: mid}}})
    elif method == "tools/list":
        result(mid, {"tools": tools, "ttlMs": 0, "cacheScope": "private"})
    elif method == "tools/call" and params.get("name") == "grow":
        if not any(t["name"] == "grown" for t in tools):
            tools.append({"name": "grown", "description": "Added by grow", "inputSchema": {"type": "object"}})
        if listening is not None:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                  "params": {"_meta": {SUB_ID: listening}}})
        result(mid, {"content": [{"type": "text", "text": "grew"}]})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
