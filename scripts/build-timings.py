#!/usr/bin/env python3
"""Prints a cargo --timings report as a table: the wall time, then the units that took longest.

Usage: scripts/build-timings.py target/cargo-timings/cargo-timing.html [how many rows, default 15]
Reads only the report's UNIT_DATA array; prints nothing it cannot read and exits 1 then.
"""
import json
import re
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    html = open(sys.argv[1], encoding="utf-8").read()
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    found = re.search(r"const UNIT_DATA = (\[.*?\n\]);", html, re.S)
    total = re.search(r"Total time:</td><td>([^<]+)</td>", html)
    if not found:
        print(f"{sys.argv[1]}: no UNIT_DATA in this report", file=sys.stderr)
        return 1
    units = json.loads(found.group(1))
    wall = total.group(1) if total else "?"
    cpu = sum(u["duration"] for u in units)
    print(f"wall time {wall}; {len(units)} units; {cpu:.0f} s of compile summed over units")
    print(f"{'seconds':>8}  {'share':>5}  unit")
    for u in sorted(units, key=lambda u: -u["duration"])[:rows]:
        target = u["target"].strip() or "lib"
        print(f"{u['duration']:8.1f}  {100 * u['duration'] / cpu:4.1f}%  {u['name']} {u['version']} {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
