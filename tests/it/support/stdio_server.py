"""The JSON-RPC line loop the Python stdio test servers share: read a request per line of stdin
until it closes, skip notifications, hand each request to the fixture's `handle(method, params)`
and write its result, or "Method not found" when it returns None. `init(name, protocol)` is the
`initialize` result with the tools capability. Writes nothing but answers to stdout.
"""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def init(name, protocol):
    return {"protocolVersion": protocol, "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "0.1"}}


def serve(handle, write=send):
    """Answers requests until stdin closes. `write` sends one message (a fixture may add noise)."""
    for line in sys.stdin:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            continue
        result = handle(method, msg.get("params") or {})
        if result is None:
            write({"jsonrpc": "2.0", "id": mid,
                   "error": {"code": -32601, "message": "Method not found"}})
        else:
            write({"jsonrpc": "2.0", "id": mid, "result": result})
