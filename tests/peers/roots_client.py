"""A 2025 (legacy) MCP client of the official Python SDK that declares `roots` and answers
`roots/list` with ROOT (a file:// URI; "none" answers no roots, "slow" never answers in time),
lists the tools, changes its roots (and says so), lists them again, calls TOOL with {} and prints {"tools": [...], "again": [...], "call":
text} as JSON (a call the upstream refuses prints its error as the text).
Used by tests/it/projects.rs.

usage: roots_client.py URL ROOT TOOL
"""

import json
import sys

import anyio
from mcp import Client, types


async def main(url, root, tool):
    current = {"root": root}

    async def list_roots(context):
        r = current["root"]
        if r == "slow":
            await anyio.sleep(5)
        roots = [] if r in ("none", "slow") else [types.Root(uri=r, name="project")]
        return types.ListRootsResult(roots=roots)

    async with Client(url, mode="legacy", list_roots_callback=list_roots) as c:
        tools = (await c.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]
        # The roots change mid-session (to another folder), and the client says so.
        current["root"] = "file:///nowhere/elsewhere"
        await c.send_roots_list_changed()
        again = (await c.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]
        try:
            result = await c.call_tool(tool, {})
            d = result.model_dump(by_alias=True, exclude_none=True)
            text = "\n".join(x.get("text", "") for x in d.get("content", []) if x.get("type") == "text")
        except Exception as e:  # the upstream may refuse the call: only its row matters
            text = f"error: {e}"
        print(json.dumps({"tools": [t["name"] for t in tools],
                          "again": [t["name"] for t in again], "call": text}))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
