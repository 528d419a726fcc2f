"""A legacy (2025-11-25) stdio MCP server for the proxy's resilience tests.

Like some old servers it exits on any request before `initialize` (so the discover probe kills
it), it exits when its `crash` tool is called, its `grow` tool adds a tool and sends
`notifications/tools/list_changed`, and it appends a line to $SPAWN_LOG at each start.
"""
import json
import os
import sys

if os.environ.get("SPAWN_LOG"):
    with open(os.environ["SPAWN_LOG"], "a") as f:
        f.write("spawn\n")
print("crashy server starting", file=sys.stderr, flush=True)

initialized = False
TOOLS = [
    {"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Exits the server", "inputSchema": {"type": "object"}},
]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        initialized = True
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "crashy", "version": "0.1"}}})
    elif not initialized:
        sys.exit(3)
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        if msg["params"]["name"] == "crash":
            sys.exit(4)
        if msg["params"]["name"] == "grow":
            TOOLS.append({"name": "grown", "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "echoed"}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
