"""A counting fixture: runs the stdio MCP server given as arguments and, for each message its
client sends it, appends one line to the file named by $COUNTING_LOG: the method and, for
`tools/call`, the tool name (never the arguments). Tests read the file to see what reached the
upstream. Everything else passes through unchanged, both ways.
"""
import json
import os
import subprocess
import sys

log = open(os.environ["COUNTING_LOG"], "a", buffering=1)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
        method = msg.get("method", "(response)")
        if method == "tools/call":
            method += " " + str(msg.get("params", {}).get("name"))
        log.write(method + "\n")
    except ValueError:
        log.write("(not json)\n")
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
sys.exit(child.wait())
