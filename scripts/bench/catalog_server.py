"""A minimal stdio MCP server (2025-11-25, newline-delimited JSON-RPC) that lists the tools of a
catalog file ({"tools": [...]}) and answers every tools/call with a short text. The "large
catalog" upstream of scripts/bench-peers.sh. Standard library only.

usage: catalog_server.py CATALOG.json
"""

import json
import sys


def main(path):
    with open(path, encoding="utf-8") as f:
        tools = json.load(f)["tools"]
    # Only the MCP fields: the fixture's bookkeeping keys (server, serverTitle...) are not a server's.
    tools = [{k: t[k] for k in ("name", "description", "inputSchema", "annotations") if k in t} for t in tools]
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "catalog-server", "version": "0.1"},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            name = msg.get("params", {}).get("name", "")
            result = {"content": [{"type": "text", "text": f"called {name}"}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
