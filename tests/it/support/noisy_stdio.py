"""A legacy (2025-11-25) stdio MCP server that writes non-JSON to stdout, as some real servers do:
a banner at start, and a progress line plus a torn half-message before every answer. Its one
tool `echo` answers `echo <n>` for the argument `n`.
"""
import sys

from stdio_server import init, send, serve


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def noisy_send(msg):
    say("Loading model... 50%")
    say('{"jsonrpc": "2.0", "id": ')
    send(msg)


def handle(method, params):
    if method == "initialize":
        return init("noisy", "2025-11-25")
    if method == "tools/list":
        return {"tools": [{"name": "echo", "description": "Echo n",
                           "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        n = params.get("arguments", {}).get("n")
        return {"content": [{"type": "text", "text": f"echo {n}"}]}
    return None


say("noisy server v0.1 ready (this line is not JSON)")
serve(handle, write=noisy_send)
