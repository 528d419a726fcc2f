"""Drives an MCP server with the official Python SDK client and prints what it saw as one JSON
object on stdout. Used by tests/it/server/python.rs.

usage: mcp_client.py URL MODE LISTED_TOOL LISTED_ARGS UNLISTED_TOOL UNLISTED_ARGS QUERY
(ARGS are JSON objects)
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


async def main(url, mode, listed, listed_args, unlisted, unlisted_args, query):
    listed_args = json.loads(listed_args)
    unlisted_args = json.loads(unlisted_args)
    out = {}
    async with Client(url, mode=mode) as c:
        out["protocol_version"] = c.protocol_version
        tools = (await c.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]
        out["tools"] = [t["name"] for t in tools]
        out["always_load"] = [bool((t.get("_meta") or {}).get("anthropic/alwaysLoad")) for t in tools]
        out["annotations"] = {t["name"]: t.get("annotations") for t in tools}
        out["direct_listed"] = text_of(await c.call_tool(listed, listed_args))
        out["direct_unlisted"] = text_of(await c.call_tool(unlisted, unlisted_args))
        out["via_call_tool"] = text_of(
            await c.call_tool("call_tool", {"name": unlisted, "arguments": unlisted_args})
        )
        out["search"] = text_of(await c.call_tool("search_tools", {"query": query}))
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:8])
