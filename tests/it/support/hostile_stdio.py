"""A legacy (2025-11-25) stdio MCP server that misbehaves in the one way named by its argument,
for the proxy's upstream fault tests (tests/it/faults/upstream.rs):

- `die`: prints a few lines on stderr, the last "dying immediately", and exits 1 at once.
- `spam`: writes SPAM_LINES (default 20000) lines to stderr at start, then serves `echo`.
- `big`: its `big` tool answers one stdout line of `bytes` bytes (from the arguments); `echo` works.
- `badlist`: answers tools/list with {"tools": "garbage"}; `echo` calls work.
- `badschema`: lists `echo` and `also_good` beside tools a client would reject (a string, a
  numeric `type`, no inputSchema, a name with a space, a non-object outputSchema).
- `hang`: its `hang` tool never answers; the call and any `notifications/cancelled` are appended
  to $CANCEL_LOG.
- `deepschema`: lists `echo` beside a tool whose inputSchema nests 200 levels deep.
- `deep`: its `deep` tool answers a structuredContent nested 200 levels deep; `echo` works.
- `endless`: every tools/list page has $ENDLESS_TOOLS tools (default 100) with descriptions of
  $ENDLESS_DESC bytes (default 200) and a new nextCursor, forever.
- `slowstart`: sleeps $SLOW_START_S seconds (default 3) before answering initialize.
"""
import json
import os
import sys

MODE = sys.argv[1]

if MODE == "die":
    print("hostile server starting", file=sys.stderr, flush=True)
    print("config: missing API key", file=sys.stderr, flush=True)
    print("dying immediately", file=sys.stderr, flush=True)
    sys.exit(1)

if MODE == "spam":
    for i in range(int(os.environ.get("SPAM_LINES", "20000"))):
        sys.stderr.write(f"spam line {i}\n")
    sys.stderr.flush()

OBJ = {"type": "object"}


def nested(depth):
    v = {}
    for _ in range(depth):
        v = {"a": v}
    return v

TOOLS = [
    {"name": "echo", "description": "Echo", "inputSchema": OBJ},
    {"name": "big", "description": "A huge answer", "inputSchema": OBJ},
    {"name": "hang", "description": "Never answers", "inputSchema": OBJ},
    {"name": "deep", "description": "A deep answer", "inputSchema": OBJ},
]
if MODE == "badschema":
    TOOLS = [
        {"name": "echo", "description": "Echo", "inputSchema": OBJ},
        {"name": "bad_string", "description": "String schema", "inputSchema": "not a schema"},
        {"name": "bad_type", "description": "Numeric type", "inputSchema": {"type": 12}},
        {"name": "no_schema", "description": "No schema"},
        {"name": "bad name", "description": "A space in the name", "inputSchema": OBJ},
        {"name": "bad_output", "description": "Output schema a string", "inputSchema": OBJ,
         "outputSchema": {"type": "string"}},
        {"name": "also_good", "description": "Also fine", "inputSchema": OBJ,
         "outputSchema": {"type": "object", "properties": {"n": {"type": "number"}}}},
    ]


if MODE == "deepschema":
    TOOLS = [
        {"name": "echo", "description": "Echo", "inputSchema": OBJ},
        {"name": "deep", "description": "Deep schema",
         "inputSchema": {"type": "object", "properties": nested(200)}},
    ]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def text(mid, t):
    send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": t}]}})


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "notifications/cancelled" and os.environ.get("CANCEL_LOG"):
        with open(os.environ["CANCEL_LOG"], "a") as f:
            f.write(json.dumps(msg.get("params")) + "\n")
    if mid is None:
        continue
    if method == "initialize":
        if MODE == "slowstart":
            import time
            time.sleep(float(os.environ.get("SLOW_START_S", "3")))
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0.1"}}})
    elif method == "tools/list" and MODE == "endless":
        page = int((msg.get("params") or {}).get("cursor") or "0")
        desc = "d" * int(os.environ.get("ENDLESS_DESC", "200"))
        tools = [{"name": f"tool_{page}_{i}", "description": desc, "inputSchema": OBJ}
                 for i in range(int(os.environ.get("ENDLESS_TOOLS", "100")))]
        send({"jsonrpc": "2.0", "id": mid,
              "result": {"tools": tools, "nextCursor": str(page + 1)}})
    elif method == "tools/list":
        tools = "garbage" if MODE == "badlist" else TOOLS
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "hang":
            if os.environ.get("CANCEL_LOG"):
                with open(os.environ["CANCEL_LOG"], "a") as f:
                    f.write("hang called\n")
            continue
        if name == "big":
            n = int(msg["params"].get("arguments", {}).get("bytes", 1000))
            text(mid, "x" * n)
            continue
        if name == "deep":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": "deep"}], "structuredContent": nested(200)}})
            continue
        if name == "also_good":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": '{"n": 1}'}], "structuredContent": {"n": 1}}})
            continue
        text(mid, "echoed")
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
