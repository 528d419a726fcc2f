"""Calls tools that need the client's input (sampling, elicitation) with the official Python SDK
client and prints what it saw as one JSON object on stdout. Used by tests/it/matrix/input.rs.

usage: input_client.py URL MODE ANSWER TOOL...
MODE is legacy or 2026-07-28 (the SDK's connect modes). ANSWER is:
  yes    the client declares sampling and elicitation and answers (name "Ada", model text "Paris")
  none   the client declares neither
  stall  the client declares both and never answers an elicitation
  refuse the client declares both and answers an elicitation with a JSON-RPC error
  logs   as yes, and asks for log messages (legacy: logging/setLevel info); they are in "logs"
Each TOOL is called with no arguments; its outcome is {"text", "isError"} or {"error": message}.
A TOOL written prompt:NAME gets prompt NAME instead; its outcome is {"text"} of the first message.
"""

import json
import sys

import anyio
from mcp import Client, types


async def sampling(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="test-model",
        stop_reason="endTurn",
    )


async def elicitation(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def stall(context, params):
    await anyio.sleep(3600)


async def refuse(context, params):
    return types.ErrorData(code=-32000, message="the user closed the dialog")


def text_of(result):
    d = result.model_dump(by_alias=True, exclude_none=True)
    texts = [c.get("text", "") for c in d.get("content", []) if c.get("type") == "text"]
    return {"text": "\n".join(texts), "isError": bool(d.get("isError", False))}


async def main(url, mode, answer, tools):
    callbacks = {
        "yes": {"sampling_callback": sampling, "elicitation_callback": elicitation},
        "none": {},
        "stall": {"sampling_callback": sampling, "elicitation_callback": stall},
        "refuse": {"sampling_callback": sampling, "elicitation_callback": refuse},
        "logs": {"sampling_callback": sampling, "elicitation_callback": elicitation},
    }[answer]
    out = {"logs": []}

    async def logged(params):
        out["logs"].append(params.data)

    async with Client(url, mode=mode, logging_callback=logged, **callbacks) as c:
        out["protocol_version"] = c.protocol_version
        if answer == "logs":
            await c.set_logging_level("info")
        for tool in tools:
            try:
                with anyio.fail_after(60):
                    if tool.startswith("prompt:"):
                        p = await c.get_prompt(tool.removeprefix("prompt:"))
                        out[tool] = {"text": p.messages[0].content.text}
                    else:
                        out[tool] = text_of(await c.call_tool(tool, {}))
            except Exception as e:  # the outcome under test: the message a user sees
                out[tool] = {"error": str(e)}
    print(json.dumps(out))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
