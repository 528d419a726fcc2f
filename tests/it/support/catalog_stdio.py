"""A stdio MCP server (2025-06-18) whose tools are the JSON array in the file named by argv[1],
read at start: tests change the file between runs of `mws serve` to change the catalog."""
import json
import sys

from stdio_server import init, serve

tools = json.load(open(sys.argv[1]))


def handle(method, params):
    if method == "initialize":
        return init("catalog", "2025-06-18")
    if method == "tools/list":
        return {"tools": tools}
    if method == "ping":
        return {}
    return None


serve(handle)
