#!/usr/bin/env python3
"""Merges a directory of tools/list results into one catalog named as mws exposes it behind `servers`.

Usage: scripts/merge-catalogs.py DIR OUT.json [--server-name NAME] [--check GOLD.jsonl ...]

Each DIR/<server>.json (not *.meta.json) is a tools/list result (`{"tools": [...]}`). Servers
are taken in file-name order, and each tool is renamed `<server>__<tool>` (key order kept), shortened
as mws shortens it (src/catalog/exposed.rs, `shorten`) when `mcp__<NAME>__<name>` would pass 64
characters; NAME is the config's `serverName`, `toolbox` by default. A server's repeated tool
name keeps its first definition; a name another server already claimed is left out (said on
stderr), as mws does. OUT is `{"tools": [...]}`, one tool a line, the shape `mws search --catalog` reads: that
shape holds only tools, so the servers' names and instructions are not carried.

--check GOLD.jsonl: also reads gold files (`{"query": ..., "expected": [...]}` per line) and
fails, naming each, when an expected tool is not in the merged catalog.
"""
import argparse
import json
import sys
from pathlib import Path

SEPARATOR = "__"
CLIENT_NAME_LIMIT = 64
MIN_NAME_BUDGET = 24
HASH_DIGITS = 8


def name_budget(server_name: str) -> int:
    """How long an exposed name may be so that `mcp__<server_name>__<name>` fits the limit."""
    return max(CLIENT_NAME_LIMIT - (len("mcp__") + len(server_name) + len(SEPARATOR)), MIN_NAME_BUDGET)


def fnv1a(data: bytes) -> int:
    """FNV-1a, 64-bit, as mws hashes a shortened name."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x00000100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def shorten(name: str, budget: int) -> str:
    """`name` within `budget` characters: its head, `_` and a hash of the whole name when too long."""
    if len(name) <= budget:
        return name
    keep = max(budget - (HASH_DIGITS + 1), 0)
    data = name.encode()
    cut = min(keep, len(data))
    while cut < len(data) and (data[cut] & 0xC0) == 0x80:  # not a character boundary
        cut -= 1
    head = data[:cut].decode().rstrip("_-.")
    return f"{head}_{fnv1a(data):016x}"[: len(head) + 1 + HASH_DIGITS]


def merge(directory: Path, server_name: str) -> list:
    """The tools of every `<server>.json` in `directory`, renamed as mws exposes them."""
    budget = name_budget(server_name)
    claimed = {}
    tools = []
    for path in sorted(directory.glob("*.json")):
        if path.name.endswith(".meta.json"):
            continue
        server = path.stem
        seen = set()
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            name = tool.get("name")
            if not isinstance(name, str) or name in seen:
                continue
            seen.add(name)
            exposed = shorten(f"{server}{SEPARATOR}{name}", budget)
            if exposed in claimed:
                print(f"{server}: tool {name!r} would be {exposed!r}, which {claimed[exposed]} has; left out", file=sys.stderr)
                continue
            claimed[exposed] = server
            tools.append({k: (exposed if k == "name" else v) for k, v in tool.items()})
    return tools


def check(gold: Path, names: set) -> int:
    """Prints each expected tool of `gold` that `names` lacks; returns how many."""
    bad = 0
    for i, line in enumerate(gold.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        for name in json.loads(line)["expected"]:
            if name not in names:
                print(f"{gold}:{i}: {name} is not in the catalog", file=sys.stderr)
                bad += 1
    return bad


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("directory", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--server-name", default="toolbox")
    p.add_argument("--check", type=Path, action="append", default=[])
    a = p.parse_args()
    tools = merge(a.directory, a.server_name)
    lines = ",\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    a.out.write_text('{"tools": [\n' + lines + "\n]}\n", encoding="utf-8")
    print(f"{a.out}: {len(tools)} tools", file=sys.stderr)
    names = {t["name"] for t in tools}
    return 1 if sum(check(g, names) for g in a.check) else 0


if __name__ == "__main__":
    sys.exit(main())
