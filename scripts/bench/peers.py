"""Peers side by side (issue 6 item 5), driven by scripts/bench-peers.sh: the same upstream
(server-everything over stdio) direct and behind mws (stdio and HTTP), tool-guardian and
mcp-proxy, all with the official Python SDK client (mcp 2.3.0, mode="auto"). Prints per subject:
p50/p99 of a sequential `echo` call, the latency added over direct stdio, calls/s at concurrency
16, the proxy's RSS, and o200k tokens of what it lists with server-everything and with a large
catalog (fixtures/livemcp-catalog.json, 527 tools) behind it. Loopback only; everything it starts
is stopped before it exits.

Latency: ROUNDS rounds of CALLS sequential calls per subject, subjects interleaved round by round
(all connected at once); added = median over rounds of (subject's round p50/p99 - direct's).
"""

import json
import shutil
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack

import anyio
from mcp import Client, StdioServerParameters

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
CALLS = int(os.environ.get("BENCH_CALLS", "1000"))
CONC_CALLS = int(os.environ.get("BENCH_CONC_CALLS", "2000"))
CONCURRENCY = 16
READY_S = 30

env = os.environ
EVERYTHING = env["EVERYTHING_JS"]
MWS = env["MWS_BIN"]
GUARDIAN = env["TOOL_GUARDIAN"]
MCP_PROXY = env["MCP_PROXY"]
CATALOG = env["LARGE_CATALOG"]
CATALOG_SERVER = env["CATALOG_SERVER"]
TOKENS = env["COUNT_TOKENS"]
WORK = tempfile.mkdtemp(prefix="mws-bench-peers-")
STARTED = []  # Popen objects to stop at exit


def upstream_cmd(kind):
    if kind == "everything":
        return ["node", EVERYTHING, "stdio"]
    return [sys.executable, CATALOG_SERVER, CATALOG]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    deadline = time.time() + READY_S
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listening on port {port} after {READY_S}s")


def mws_config(kind, tag):
    d = os.path.join(WORK, f"mws-{kind}-{tag}")
    os.makedirs(d, exist_ok=True)
    cmd = upstream_cmd(kind)
    path = os.path.join(d, "config.json")
    with open(path, "w") as f:
        # `echo` pinned: a tool in use is in the working set. (Unlisted, it would still answer, but
        # the Python SDK re-lists tools after every call to a tool it has not seen listed.)
        pins = ["echo"] if kind == "everything" else []
        json.dump({"upstream": {"command": cmd[0], "args": cmd[1:]}, "pins": pins}, f)
    return ["--config", path, "serve", "--state-dir", os.path.join(d, "state")]


def guardian_env(kind):
    d = os.path.join(WORK, f"guardian-{kind}")
    os.makedirs(d, exist_ok=True)
    cmd = upstream_cmd(kind)
    cfg = os.path.join(d, "mcp.json")
    with open(cfg, "w") as f:
        json.dump({"mcpServers": {kind: {"command": cmd[0], "args": cmd[1:]}}}, f)
    e = dict(os.environ, HOME=d, GUARDIAN_NO_UPDATE_CHECK="1",
             TOOL_GUARDIAN_CALL_LOG=os.path.join(d, "calls.jsonl"),
             TOOL_GUARDIAN_STATE=os.path.join(d, "state.json"),
             TOOL_GUARDIAN_SPILL_DIR=os.path.join(d, "spill"))
    return cfg, e


def start_http(argv, port):
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    STARTED.append(p)
    wait_port(port)
    return p


def subject(name, kind):
    """(label, path, Client target, pid finder) for one subject in front of upstream `kind`."""
    if name == "direct":
        cmd = upstream_cmd(kind)
        return "direct", "stdio", StdioServerParameters(command=cmd[0], args=cmd[1:]), lambda: None
    if name == "mws-stdio":
        args = mws_config(kind, "stdio") + ["--stdio"]
        return "mws", "stdio→stdio", StdioServerParameters(command=MWS, args=args), lambda: child_pid(MWS)
    if name == "mws-http":
        port = free_port()
        p = start_http([MWS] + mws_config(kind, "http") + ["--port", str(port)], port)
        return "mws", "http→stdio", f"http://127.0.0.1:{port}/mcp", lambda: p.pid
    if name == "tool-guardian":
        cfg, e = guardian_env(kind)
        params = StdioServerParameters(command=GUARDIAN, args=["--config", cfg], env=e)
        return "tool-guardian 0.8.1", "stdio→stdio", params, lambda: child_pid(GUARDIAN)
    if name == "mcp-proxy":
        port = free_port()
        cmd = upstream_cmd(kind)
        p = start_http([MCP_PROXY, "--host", "127.0.0.1", "--port", str(port), "--"] + cmd, port)
        return "mcp-proxy 0.13.0", "http→stdio", f"http://127.0.0.1:{port}/mcp", lambda: p.pid
    raise ValueError(name)


def child_pid(exe):
    """Our child process whose command line holds `exe` (the SDK starts stdio servers)."""
    me = os.getpid()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and os.path.basename(exe) in cmdline:
            return int(pid)
    return None


def rss_mb(pid):
    if pid is None:
        return None
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


SUBJECTS = ["direct", "mws-stdio", "mws-http", "tool-guardian", "mcp-proxy"]


async def call_echo(name, client, i):
    if name == "tool-guardian":
        r = await client.call_tool("call_tool", {"server": "everything", "tool": "echo", "args": {"message": f"m{i}"}})
    else:
        r = await client.call_tool("echo", {"message": f"m{i}"})
    if r.is_error:
        raise SystemExit(f"{name}: echo failed: {r.model_dump()}")


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * p))]


async def list_tools(client):
    return (await client.list_tools()).model_dump(by_alias=True, exclude_none=True)["tools"]


async def main():
    results = {}
    counter = 0
    async with AsyncExitStack() as stack:
        clients = {}
        for name in SUBJECTS:
            label, path, target, pid = subject(name, "everything")
            clients[name] = await stack.enter_async_context(Client(target, mode="auto", read_timeout_seconds=60))
            results[name] = {"label": label, "path": path, "pid": pid, "p50": [], "p99": [], "all": []}
        for name, c in clients.items():
            tools = await list_tools(c)
            results[name]["everything_tools"] = len(tools)
            dump(name, "everything", tools)
            for i in range(50):  # warm-up
                counter += 1
                await call_echo(name, c, counter)
        for r in range(ROUNDS):
            order = SUBJECTS if r % 2 == 0 else SUBJECTS[::-1]
            for name in order:
                lat = []
                for _ in range(CALLS):
                    counter += 1
                    t0 = time.perf_counter()
                    await call_echo(name, clients[name], counter)
                    lat.append(time.perf_counter() - t0)
                results[name]["p50"].append(q(lat, 0.5))
                results[name]["p99"].append(q(lat, 0.99))
                results[name]["all"].extend(lat)
            print(f"round {r + 1}/{ROUNDS} done", file=sys.stderr)
        for name in SUBJECTS:
            c = clients[name]
            base = counter
            counter += CONC_CALLS
            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for w in range(CONCURRENCY):
                    async def worker(w=w):
                        for i in range(w, CONC_CALLS, CONCURRENCY):
                            await call_echo(name, c, base + i)
                    tg.start_soon(worker)
            results[name]["rps"] = CONC_CALLS / (time.perf_counter() - t0)
            results[name]["rss"] = rss_mb(results[name]["pid"]())
    # The large catalog: list once through each subject.
    async with AsyncExitStack() as stack:
        for name in SUBJECTS:
            _, _, target, _ = subject(name, "catalog")
            c = await stack.enter_async_context(Client(target, mode="auto", read_timeout_seconds=60))
            tools = await list_tools(c)
            results[name]["catalog_tools"] = len(tools)
            dump(name, "catalog", tools)
    stop_started()
    report(results)


def dump(name, kind, tools):
    with open(os.path.join(WORK, f"list-{name}-{kind}.json"), "w") as f:
        json.dump(tools, f, separators=(",", ":"), ensure_ascii=False)


def tokens():
    files = [os.path.join(WORK, f) for f in sorted(os.listdir(WORK)) if f.startswith("list-")]
    out = subprocess.run([TOKENS] + files, check=True, capture_output=True, text=True).stdout
    return {os.path.basename(p)[5:-5]: int(n) for n, _, p in (line.split("\t") for line in out.splitlines())}


def report(results):
    tok = tokens()
    d = results["direct"]
    print(f"\npeers side by side: server-everything (stdio), mcp 2.3.0 client, {ROUNDS} rounds x {CALLS} "
          f"sequential echo calls, {CONC_CALLS} calls at concurrency {CONCURRENCY}")
    print("| subject | path | p50 | p99 | added p50 | added p99 | calls/s @16 | proxy RSS | tokens listed, everything | tokens listed, 527-tool catalog |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name in SUBJECTS:
        r = results[name]
        if name == "direct":
            add50 = add99 = "—"
        else:
            add50 = f"{statistics.median(a - b for a, b in zip(r['p50'], d['p50'])) * 1e3:+.3f} ms"
            add99 = f"{statistics.median(a - b for a, b in zip(r['p99'], d['p99'])) * 1e3:+.2f} ms"
        rss = f"{r['rss']:.1f} MB" if r["rss"] else "—"
        print(f"| {r['label']} | {r['path']} | {q(r['all'], 0.5) * 1e3:.3f} ms | {q(r['all'], 0.99) * 1e3:.2f} ms | "
              f"{add50} | {add99} | {r['rps']:,.0f} | {rss} | "
              f"{tok[name + '-everything']:,} ({r['everything_tools']} tools) | {tok[name + '-catalog']:,} ({r['catalog_tools']} tools) |")


def stop_started():
    for p in STARTED:
        p.terminate()
    for p in STARTED:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    STARTED.clear()


if __name__ == "__main__":
    try:
        anyio.run(main)
    finally:
        stop_started()
        shutil.rmtree(WORK, ignore_errors=True)
