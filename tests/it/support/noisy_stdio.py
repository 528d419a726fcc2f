"""A legacy (2025-11-25) stdio MCP server that writes non-JSON to stdout, as some real servers do:
a banner at start, and a progress line plus a torn half-message before every answer. Its one
tool `echo` answers `echo <n>` for the argument `n`.
"""
import json
import sys


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def send(msg):
    say("Loading model... 50%")
    say('{"jsonrpc": "2.0", "id": ')
    say(json.dumps(msg))


say("noisy server v0.1 ready (this line is not JSON)")
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy", "version": "0.1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "echo", "description": "Echo n", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        n = msg["params"].get("arguments", {}).get("n")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": f"echo {n}"}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
