"""Starts a real stdio MCP server (argv[1:], e.g. mcp-server-time on the Python SDK), slowly when
restarted: each start appends its pid to $SPAWN_LOG, and every start after the first sleeps
longer than mws's discover-probe timeout before the server reads its stdin, so the probe and
whatever follows it are waiting there when the server comes up. The pid stays the server's
(exec), so a test can kill it.
"""
import os
import sys
import time

log = os.environ["SPAWN_LOG"]
restarted = os.path.exists(log)
with open(log, "a") as f:
    f.write(f"{os.getpid()}\n")
if restarted:
    time.sleep(float(os.environ.get("RESTART_DELAY_S", "4.5")))
os.execv(sys.argv[1], sys.argv[1:])
