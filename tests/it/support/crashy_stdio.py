"""A legacy (2025-11-25) stdio MCP server for the proxy's resilience tests.

Like some old servers it exits on any request before `initialize` (so the discover probe kills
it), it exits when its `crash` tool is called, its `grow` tool adds a tool and sends
`notifications/tools/list_changed`, and it appends a line to $SPAWN_LOG at each start.
"""
import os
import sys

from stdio_server import init, send, serve

if os.environ.get("SPAWN_LOG"):
    with open(os.environ["SPAWN_LOG"], "a") as f:
        f.write("spawn\n")
print("crashy server starting", file=sys.stderr, flush=True)

initialized = False
TOOLS = [
    {"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Exits the server", "inputSchema": {"type": "object"}},
]


def handle(method, params):
    global initialized
    if method == "initialize":
        initialized = True
        return init("crashy", "2025-11-25")
    if not initialized:
        sys.exit(3)
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        if params["name"] == "crash":
            sys.exit(4)
        if params["name"] == "grow":
            TOOLS.append({"name": "grown", "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "echoed"}]}
    return None


serve(handle)
