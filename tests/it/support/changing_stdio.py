"""A stdio MCP server (2025-06-18) whose tools are the JSON array in the file named by argv[1],
read again on every `tools/list`; when the file changes it sends
`notifications/tools/list_changed`. `tools/call` answers "ran <name>" and appends
"tools/call <name>" to the file named by argv[2], so a test sees exactly which tool ran."""
import json
import os
import sys
import threading
import time

from stdio_server import init, serve

LOCK = threading.Lock()


def send(msg):
    with LOCK:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def tools():
    return json.load(open(sys.argv[1]))


def watch():
    """Announces each change of the tools file (polled every 50 ms; ends with the process)."""
    seen = os.stat(sys.argv[1]).st_mtime_ns
    while True:
        time.sleep(0.05)
        now = os.stat(sys.argv[1]).st_mtime_ns
        if now != seen:
            seen = now
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def handle(method, params):
    if method == "initialize":
        result = init("changing", "2025-06-18")
        result["capabilities"]["tools"] = {"listChanged": True}
        return result
    if method == "tools/list":
        return {"tools": tools()}
    if method == "ping":
        return {}
    if method == "tools/call":
        name = params.get("name")
        with open(sys.argv[2], "a") as log:
            log.write(f"tools/call {name}\n")
        return {"content": [{"type": "text", "text": f"ran {name}"}]}
    return None


threading.Thread(target=watch, daemon=True).start()
serve(handle, write=send)
