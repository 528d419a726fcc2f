#!/usr/bin/env bash
# Peers side by side (issue 6 item 5): mws, tool-guardian (PyPI 0.8.1) and mcp-proxy (PyPI 0.13.0)
# in front of the same upstream (@modelcontextprotocol/server-everything over stdio, and a
# 527-tool catalog server), measured with the official Python SDK client. Prints one Markdown
# table (the one in docs/performance.md). Loopback only; bounded by BENCH_TIMEOUT (default 1800 s);
# every process it starts is stopped. Each peer gets its own virtualenv (.venv-tool-guardian,
# .venv-mcp-proxy): mcp-proxy needs `mcp<2`, which would downgrade the SDK the client uses.
# Knobs: BENCH_ROUNDS (5), BENCH_CALLS per round (1000), BENCH_CONC_CALLS (2000).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-peers.sh
peer_venv() { # dir, pip requirements...
  local dir=$1; shift
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
}
peer_venv .venv-tool-guardian "tool-guardian==0.8.1"
peer_venv .venv-mcp-proxy "mcp-proxy==0.13.0" "mcp<2"

cargo build --release --quiet --bin mws --example count_tokens

export EVERYTHING_JS="$PWD/tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
export MWS_BIN="$PWD/target/release/mws"
export TOOL_GUARDIAN="$PWD/.venv-tool-guardian/bin/tool-guardian"
export MCP_PROXY="$PWD/.venv-mcp-proxy/bin/mcp-proxy"
export LARGE_CATALOG="$PWD/fixtures/livemcp-catalog.json"
export CATALOG_SERVER="$PWD/scripts/bench/catalog_server.py"
export COUNT_TOKENS="$PWD/target/release/examples/count_tokens"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%F)" >&2
exec timeout --kill-after=10 "${BENCH_TIMEOUT:-1800}" .venv/bin/python scripts/bench/peers.py
