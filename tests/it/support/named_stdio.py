"""A stdio MCP server (2025-06-18) whose tools are the JSON array in the file named by argv[1];
`tools/call` answers "ran <name>" for a tool it has (an error result otherwise) and appends
"tools/call <name>" to the file named by argv[2], so a test sees exactly which tool ran."""
import json
import sys

from stdio_server import init, serve

tools = json.load(open(sys.argv[1]))
names = {t["name"] for t in tools}


def handle(method, params):
    if method == "initialize":
        return init("named", "2025-06-18")
    if method == "tools/list":
        return {"tools": tools}
    if method == "ping":
        return {}
    if method == "tools/call":
        name = params.get("name")
        with open(sys.argv[2], "a") as log:
            log.write(f"tools/call {name}\n")
        if name in names:
            return {"content": [{"type": "text", "text": f"ran {name}"}]}
        return {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True}
    return None


serve(handle)
