"""A legacy (2025-11-25) stdio MCP server with big results, for result shaping tests. Tools:
`big_text` answers 300 KB of numbered lines (a marker string on the middle line, so a test can
look for it on disk); `big_array` answers a 5,000-element JSON array as text and as
`structuredContent.items`; `small` answers one short line; `one_mb` answers 1 MiB of text
(`benches/results.rs`). Deterministic: the tests build the
same text and items. Arguments are ignored.
"""
import json
import sys

MARKER = "MWS-RESULT-MARKER-5c1e"
LINES = 5400


def big_text():
    return "".join(
        f"line {i:06d}: the quick brown fox jumps over the lazy dog"
        + (f" {MARKER}" if i == LINES // 2 else "")
        + "\n"
        for i in range(LINES)
    )


def items():
    return [{"n": i, "name": f"item {i}"} for i in range(5000)]


TOOLS = [
    {"name": "big_text", "description": "300 KB of text", "inputSchema": {"type": "object"}},
    {"name": "big_array", "description": "5000 items", "inputSchema": {"type": "object"}},
    {"name": "small", "description": "a short line", "inputSchema": {"type": "object"}},
    {"name": "one_mb", "description": "1 MiB of text", "inputSchema": {"type": "object"}},
]
ONE_MB = ("0123456789abcdef" * 4 + "\n") * (1024 * 1024 // 65) + "end\n"


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "big", "version": "0.1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = msg["params"].get("name")
        if name == "big_text":
            result = {"content": [{"type": "text", "text": big_text()}]}
        elif name == "big_array":
            result = {"content": [{"type": "text", "text": json.dumps(items())}],
                      "structuredContent": {"count": 5000, "items": items()}}
        elif name == "one_mb":
            result = {"content": [{"type": "text", "text": ONE_MB}]}
        else:
            result = {"content": [{"type": "text", "text": "small answer"}]}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
