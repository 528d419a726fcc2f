"""Drives an MCP server with the official Python SDK client and prints what it saw as one JSON
object on stdout. Used by tests/it/server/python.rs.

usage: mcp_client.py URL MODE LISTED_TOOL UNLISTED_TOOL QUERY
MODE is auto, legacy or 2026-07-28 (the SDK's connect modes).
"""

import json
import sys

import anyio
from mcp import Client


def text_of(result):
    d = result.model_dump(by_alias=True, exclude_none=True)
    texts = [c.get("text", "") for c in d.get("content", []) if c.get("type") == "text"]
    return {"text": "\n".join(texts), "isError": bool(d.get("isError", False))}


async def main(url, mode, listed, unlisted, query):
    out = {}
    async with Client(url, mode=mode) as c:
        out["protocol_version"] = c.protocol_version
        tools = (await c.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]
        out["tools"] = [t["name"] for t in tools]
        out["always_load"] = [bool((t.get("_meta") or {}).get("anthropic/alwaysLoad")) for t in tools]
        out["annotations"] = {t["name"]: t.get("annotations") for t in tools}
        out["direct_listed"] = text_of(await c.call_tool(listed, {"n": 1}))
        out["direct_unlisted"] = text_of(await c.call_tool(unlisted, {"n": 2}))
        out["via_call_tool"] = text_of(
            await c.call_tool("call_tool", {"name": unlisted, "arguments": {"n": 3}})
        )
        out["search"] = text_of(await c.call_tool("search_tools", {"query": query}))
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:6])
