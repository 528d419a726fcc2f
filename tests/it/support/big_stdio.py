"""A legacy (2025-11-25) stdio MCP server with big results, for result shaping tests. Tools:
`big_text` answers 300 KB of numbered lines (a marker string on the middle line, so a test can
look for it on disk); `big_array` answers a 5,000-element JSON array as text and as
`structuredContent.items`; `small` answers one short line; `one_mb` answers 1 MiB of text
(`benches/results.rs`). Deterministic: the tests build the
same text and items. Arguments are ignored.
"""
import json

from stdio_server import init, serve

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


def handle(method, params):
    if method == "initialize":
        return init("big", "2025-11-25")
    if method == "tools/list":
        return {"tools": TOOLS}
    if method != "tools/call":
        return None
    name = params.get("name")
    if name == "big_text":
        return {"content": [{"type": "text", "text": big_text()}]}
    if name == "big_array":
        return {"content": [{"type": "text", "text": json.dumps(items())}],
                "structuredContent": {"count": 5000, "items": items()}}
    if name == "one_mb":
        return {"content": [{"type": "text", "text": ONE_MB}]}
    return {"content": [{"type": "text", "text": "small answer"}]}


serve(handle)
