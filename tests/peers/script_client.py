"""Runs one code-mode script through an MCP server with the official Python SDK client and prints
what it saw as one JSON object on stdout. Used by tests/it/server/python.rs.

usage: script_client.py URL CODE
"""

import json
import sys

import anyio
from mcp import Client


async def main(url, code):
    out = {}
    async with Client(url) as c:
        tools = (await c.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]
        out["tools"] = [t["name"] for t in tools]
        result = await c.call_tool("run_script", {"code": code})
        d = result.model_dump(by_alias=True, exclude_none=True)
        texts = [p.get("text", "") for p in d.get("content", []) if p.get("type") == "text"]
        out["text"] = "\n".join(texts)
        out["isError"] = bool(d.get("isError", False))
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
