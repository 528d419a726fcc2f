#!/usr/bin/env bash
# Runs the official MCP conformance server suites (@modelcontextprotocol/conformance 0.1.16
# `--suite all`, and 0.2.0-alpha.12 at --spec-version 2025-11-25 and 2026-07-28) against the
# project's fixture upstream (examples/conformance_upstream), directly or, with --through-mws,
# through `mws serve` in front of it. With --client it runs the client suite (0.2.0-alpha.12) with
# mws as the client under test (scripts/conformance-client.sh puts mws in front of each scenario
# server and drives it with the Python SDK client). Prints pass/fail counts per suite and exits
# non-zero when a check fails that the baseline does not list, or when a baseline entry no longer
# fails (stale).
#
#   scripts/conformance.sh [--through-mws | --client] [--suite 0.1.16|2025-11-25|2026-07-28]...
#
# Baselines: tests/conformance/baseline-{direct,proxy,client}.txt, one expected failure per line:
# `<suite> <scenario> <check-id>  # why it cannot pass` (client suites are named client-<spec>).
# Node 22 and the suites are
# installed into tests/conformance/node_modules (pinned in tests/conformance/package.json).
# Everything started here runs under a timeout and is killed on exit. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PEERS=tests/conformance
NODE=$PEERS/node_modules/.bin/node
SUITE_STABLE=$PEERS/node_modules/@modelcontextprotocol/conformance/dist/index.js
SUITE_ALPHA=$PEERS/node_modules/conformance-alpha/dist/index.js
# Seconds one suite run may take before it is killed (a full alpha run takes about a minute).
SUITE_TIMEOUT=${CONFORMANCE_SUITE_TIMEOUT:-600}
# Seconds the fixture and the proxy may live: longer than every suite together.
LIFETIME=$((SUITE_TIMEOUT * 3 + 120))
# Seconds to wait for a server to start listening.
START_TIMEOUT=30

mode=direct
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    --through-mws) mode=proxy ;;
    --client) mode=client ;;
    --suite) shift; suites+=("${1:?--suite needs a name}") ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "conformance.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#suites[@]} -gt 0 ] || suites=(0.1.16 2025-11-25 2026-07-28)
for s in "${suites[@]}"; do
  case "$s" in 0.1.16|2025-11-25|2026-07-28) ;; *) echo "conformance.sh: unknown suite $s" >&2; exit 2 ;; esac
done
baseline=$ROOT/$PEERS/baseline-$mode.txt
results=$ROOT/$PEERS/results/$mode
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== peers (Node 22, conformance suites)"
if [ ! -x "$NODE" ] || [ ! -f "$SUITE_STABLE" ] || [ ! -f "$SUITE_ALPHA" ]; then
  (cd $PEERS && timeout 600 npm install --no-audit --no-fund --loglevel=error)
fi
"$NODE" --version

echo "== build"
cargo build --quiet --example conformance_upstream
[ "$mode" = direct ] || cargo build --quiet --bin mws
if [ "$mode" = client ] && [ ! -x .venv/bin/python ]; then
  echo "conformance.sh: --client needs the Python SDK in .venv; run scripts/setup-peers.sh" >&2
  exit 1
fi

# Compares the checks.json files under $results with $baseline for "${suites[@]}"; exits 1 on an
# unexpected failure or a stale baseline entry.
compare() {
  echo "== compare with $(basename "$baseline")"
  python3 - "$results" "$baseline" "${suites[@]}" <<'EOF'
import json, pathlib, re, sys
results, baseline, suites = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
expected = {}
for n, line in enumerate(baseline.read_text().splitlines() if baseline.exists() else [], 1):
    entry = line.split("#", 1)[0].split()
    if not entry:
        continue
    if len(entry) != 3:
        sys.exit(f"{baseline}:{n}: expected `<suite> <scenario> <check-id>  # reason`, got {line!r}")
    expected[tuple(entry)] = n
failed, counts = set(), {}
for s in suites:
    ok = bad = 0
    # An auth/* scenario's results are one directory deeper (auth/<name>-<time>/).
    for checks in sorted((results / s).glob("**/checks.json")):
        rel = checks.parent.relative_to(results / s).as_posix()
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT[\d-]+Z$", "", rel)
        for c in json.loads(checks.read_text()):
            if c.get("status") == "FAILURE":
                bad += 1
                failed.add((s, scenario, c.get("id", "?")))
            elif c.get("status") == "SUCCESS":
                ok += 1
    counts[s] = (ok, bad)
    print(f"conformance {s}: {ok} checks passed, {bad} failed (see the baseline comparison below)")
unexpected = sorted(failed - expected.keys())
stale = sorted(k for k in expected if k[0] in suites and k not in failed)
for k in unexpected:
    print("UNEXPECTED FAILURE:", *k)
for k in stale:
    print(f"STALE BASELINE ENTRY (passes now; remove line {expected[k]}):", *k)
sys.exit(1 if unexpected or stale else 0)
EOF
}
compare_run() { compare || verdict=$?; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something accepts connections on 127.0.0.1:$1; fails showing $2's log if it does
# not, or if process $3 exits first.
wait_port() {
  for _ in $(seq $((START_TIMEOUT * 10))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then
      echo "conformance.sh: $2 exited before listening on port $1; its log:" >&2
      cat "$tmp/$2.err" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "conformance.sh: $2 did not listen on port $1 within ${START_TIMEOUT}s; its log:" >&2
  cat "$tmp/$2.err" >&2
  exit 1
}

# Client scenarios run one at a time (a parallel `--suite all` starts one mws per scenario at once,
# too many for a small machine): (spec version, scenario). The auth/* scenarios run with a headless
# `mws login` first (scripts/conformance-client.sh); the extension ones (client credentials,
# enterprise-managed, DPoP, workload identity) are not run: mws offers no such grants.
CLIENT_SCENARIOS=(
  "2025-11-25 tools_call"
  "2025-11-25 elicitation-sep1034-client-defaults"
  "2025-11-25 sse-retry"
  "2026-07-28 tools_call"
  "2026-07-28 request-metadata"
  "2026-07-28 http-standard-headers"
  "2026-07-28 http-custom-headers"
  "2026-07-28 http-invalid-tool-headers"
  "2026-07-28 json-schema-ref-no-deref"
  "2026-07-28 auth/metadata-default"
  "2026-07-28 auth/metadata-var1"
  "2026-07-28 auth/metadata-var2"
  "2026-07-28 auth/metadata-var3"
  "2026-07-28 auth/basic-cimd"
  "2026-07-28 auth/scope-from-www-authenticate"
  "2026-07-28 auth/scope-from-scopes-supported"
  "2026-07-28 auth/scope-omitted-when-undefined"
  "2026-07-28 auth/scope-step-up"
  "2026-07-28 auth/scope-retry-limit"
  "2026-07-28 auth/token-endpoint-auth-basic"
  "2026-07-28 auth/token-endpoint-auth-post"
  "2026-07-28 auth/token-endpoint-auth-none"
  "2026-07-28 auth/pre-registration"
  "2026-07-28 auth/resource-mismatch"
  "2026-07-28 auth/offline-access-scope"
  "2026-07-28 auth/offline-access-not-supported"
  "2026-07-28 auth/authorization-server-migration"
  "2026-07-28 auth/iss-supported"
  "2026-07-28 auth/iss-not-advertised"
  "2026-07-28 auth/iss-supported-missing"
  "2026-07-28 auth/iss-wrong-issuer"
  "2026-07-28 auth/iss-unexpected"
  "2026-07-28 auth/iss-normalized"
  "2026-07-28 auth/metadata-issuer-mismatch"
  "2025-11-25 auth/metadata-default"
  "2025-11-25 auth/scope-step-up"
  "2025-03-26 auth/2025-03-26-oauth-metadata-backcompat"
  "2025-03-26 auth/2025-03-26-oauth-endpoint-fallback"
)
if [ "$mode" = client ]; then
  rm -rf "$results"
  mkdir -p "$results"
  suites=()
  abnormal=0
  for entry in "${CLIENT_SCENARIOS[@]}"; do
    read -r spec scenario <<<"$entry"
    s=client-$spec
    [[ " ${suites[*]} " == *" $s "* ]] || suites+=("$s")
    echo "== client scenario $scenario at $spec"
    log="$results/$s-${scenario//\//-}.log"
    timeout "$SUITE_TIMEOUT" "$NODE" "$SUITE_ALPHA" client --command "$ROOT/scripts/conformance-client.sh" \
      --scenario "$scenario" --spec-version "$spec" -o "$results/$s" >"$log" 2>&1 || true
    if ! grep -E '^Passed: [0-9]+/[1-9]' "$log" | sed "s|^Passed:|scenario $scenario passed|"; then
      echo "conformance.sh: scenario $scenario at $spec ran no checks; see $log" >&2
      tail -5 "$log" >&2
      abnormal=1
    fi
  done
  compare
  echo "results: $results"
  exit $abnormal
fi

echo "== fixture upstream"
fport=$(free_port)
timeout "$LIFETIME" target/debug/examples/conformance_upstream "$fport" >"$tmp/fixture.out" 2>"$tmp/fixture.err" &
pids+=($!)
wait_port "$fport" fixture "${pids[-1]}"
url="http://127.0.0.1:$fport/mcp"
echo "fixture: $url"

if [ "$mode" = proxy ]; then
  echo "== mws serve in front of it"
  pport=$(free_port)
  # mws lists its working set, not the whole catalog: the run's config pins every tool the fixture
  # offers (the suites look them up in tools/list), as a user pins the tools they always want.
  pins=$(python3 - "$url" <<'PY'
import json, sys, urllib.request
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
names, cursor = [], None
for _ in range(100):
    params = {"_meta": meta, **({"cursor": cursor} if cursor else {})}
    req = urllib.request.Request(sys.argv[1], method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}).encode())
    text = urllib.request.urlopen(req, timeout=30).read().decode()
    body = next((l[5:] for l in text.splitlines() if l.startswith("data:")), text)
    result = json.loads(body)["result"]
    names += [t["name"] for t in result["tools"]]
    cursor = result.get("nextCursor")
    if not cursor:
        break
print(json.dumps(names))
PY
)
  cat >"$tmp/config.json" <<EOF
{ "upstream": { "url": "$url" }, "listen": { "host": "127.0.0.1", "port": $pport }, "stateDir": "$tmp/state",
  "pins": $pins }
EOF
  timeout "$LIFETIME" target/debug/mws serve --config "$tmp/config.json" --port "$pport" >"$tmp/mws.out" 2>"$tmp/mws.err" &
  pids+=($!)
  wait_port "$pport" mws "${pids[-1]}"
  url="http://127.0.0.1:$pport/mcp"
  echo "mws: $url"
fi

rm -rf "$results"
mkdir -p "$results"
runner_failed=()
for s in "${suites[@]}"; do
  echo "== suite $s against $url"
  case "$s" in
    0.1.16) args=("$SUITE_STABLE" server --url "$url" --suite all) ;;
    *) args=("$SUITE_ALPHA" server --url "$url" --suite all --spec-version "$s") ;;
  esac
  if ! timeout "$SUITE_TIMEOUT" "$NODE" "${args[@]}" -o "$results/$s" >"$results/$s.log" 2>&1; then
    runner_failed+=("$s")
  fi
  grep -E '^Total:' "$results/$s.log" | sed "s/^Total:/suite $s total:/" || { echo "(no summary; see $results/$s.log)"; tail -5 "$results/$s.log"; }
done

verdict=0
compare_run
if [ ${#runner_failed[@]} -gt 0 ] && [ $verdict -eq 0 ]; then
  # The runner exits non-zero on any failure; only a run with no failing checks is suspicious.
  for s in "${runner_failed[@]}"; do
    if ! grep -qE '^Total: .* [1-9][0-9]* failed' "$results/$s.log"; then
      echo "conformance.sh: suite $s ended abnormally; see $results/$s.log" >&2
      exit 1
    fi
  done
fi
echo "results: $results"
exit $verdict
