#!/usr/bin/env bash
# Bounded fuzzing of the fuzz/ targets with cargo fuzz (libFuzzer): each target runs for
# FUZZ_SECONDS (default 30) from its seed corpus in fuzz/seeds/<target> (with fuzz/<target>.dict
# as its dictionary when there is one), then the regression inputs in fuzz/regressions/<target>
# are replayed. Fails on any crash; a crash's input is left in
# fuzz/artifacts/<target>/ and belongs in fuzz/regressions/<target>/ once fixed.
#
#   bash scripts/fuzz.sh                # every target
#   FUZZ_SECONDS=600 bash scripts/fuzz.sh sse
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(http_request header_value sse claude_code codex)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# cargo fuzz wants nightly; on a machine with only stable, RUSTC_BOOTSTRAP lets stable take the
# same flags.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi
# No sanitizer: the code under test is safe Rust, so the findings are panics (debug assertions
# are on); ASan would only slow the build of the bundled SQLite and the run.
"${fuzz[@]}" build -s none
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
    corpus="fuzz/corpus/$t"
    mkdir -p "$corpus"
    seeds=()
    [ -d "fuzz/seeds/$t" ] && seeds+=("fuzz/seeds/$t")
    case "$t" in
        claude_code) seeds+=(fixtures/transcripts/claude/projects/-Users-dana-src-weather-app) ;;
        codex) seeds+=(fixtures/transcripts/codex/sessions/2026/11/28 fixtures/transcripts/real) ;;
    esac
    dict=()
    [ -f "fuzz/$t.dict" ] && dict+=("-dict=fuzz/$t.dict")
    echo "== fuzz $t for ${seconds}s"
    if ! "${fuzz[@]}" run -s none "$t" "$corpus" "${seeds[@]}" -- "${dict[@]}" \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz target $t crashed; its input is in fuzz/artifacts/$t/"
        exit 1
    fi
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
    if [ -d "fuzz/regressions/$t" ]; then
        echo "== replay fuzz/regressions/$t"
        "${fuzz[@]}" run -s none "$t" fuzz/regressions/$t/*
    fi
done
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a crash"
