"""A 2026-07-28 stdio MCP server that says what changed only on a `subscriptions/listen`, as the
2026 revision has it: `notifications/tools/list_changed` goes to the open listen that asked for
`toolsListChanged`, `notifications/resources/updated` for a URI to each open listen whose
`resourceSubscriptions` holds it, each tagged with that listen's subscription id, and nothing goes
anywhere else. Tools: `grow` adds the tool `grown`; `touch {uri}` changes the resource `uri`; `listens` answers
with the filters of the open listens, as JSON text.
"""
import json
import sys

VERSION = "2026-07-28"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
tools = [
    {"name": "grow", "description": "Add the tool grown", "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "Change the resource uri",
     "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}}},
    {"name": "listens", "description": "The open listens' filters", "inputSchema": {"type": "object"}},
]
listens = {}  # open listen id (as JSON text) -> (id, its notifications filter)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(mid, body):
    body.setdefault("resultType", "complete")
    send({"jsonrpc": "2.0", "id": mid, "result": body})


def tell(method, params, wanted):
    for lid, filt in listens.values():
        if wanted(filt):
            send({"jsonrpc": "2.0", "method": method,
                  "params": dict(params, _meta={SUB_ID: lid})})


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "notifications/cancelled":
        listens.pop(json.dumps(params.get("requestId")), None)
        continue
    if mid is None:
        continue
    if method == "server/discover":
        result(mid, {"supportedVersions": [VERSION],
                     "capabilities": {"tools": {"listChanged": True},
                                      "resources": {"subscribe": True}},
                     "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "listening", "version": "0.1"}},
                     "ttlMs": 0, "cacheScope": "private"})
    elif method == "subscriptions/listen":
        listens[json.dumps(mid)] = (mid, params.get("notifications", {}))
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"_meta": {SUB_ID: mid}}})
    elif method == "tools/list":
        result(mid, {"tools": tools, "ttlMs": 0, "cacheScope": "private"})
    elif method == "resources/list":
        result(mid, {"resources": [], "ttlMs": 0, "cacheScope": "private"})
    elif method == "tools/call" and params.get("name") == "grow":
        if not any(t["name"] == "grown" for t in tools):
            tools.append({"name": "grown", "description": "Added by grow", "inputSchema": {"type": "object"}})
        tell("notifications/tools/list_changed", {}, lambda f: f.get("toolsListChanged"))
        result(mid, {"content": [{"type": "text", "text": "grew"}]})
    elif method == "tools/call" and params.get("name") == "touch":
        uri = params.get("arguments", {}).get("uri")
        tell("notifications/resources/updated", {"uri": uri},
             lambda f: uri in f.get("resourceSubscriptions", []))
        result(mid, {"content": [{"type": "text", "text": f"touched {uri}"}]})
    elif method == "tools/call" and params.get("name") == "listens":
        text = json.dumps([f for _, f in listens.values()])
        result(mid, {"content": [{"type": "text", "text": text}]})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
