#!/usr/bin/env bash
# Fuzzes the input parsers with libFuzzer: amounts, feed cursors, invite codes,
# community settings JSON and recurrence rules, each for a bounded time.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET…]     (default: 60 s, every target)
#
# Builds orbit-fuzz with -sanitize=fuzzer into .build-fuzz/ (lld links it; gold cannot), runs
# each target from its kept corpus in fuzz/corpus/TARGET/, and merges the inputs that reached
# new code back into that corpus (commit them: the tests replay the whole corpus). An input
# that breaks a property is saved as fuzz/crashes/TARGET-crash-… and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(amount cursor invite-code settings rrule)

swift build -c release --product orbit-fuzz --build-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
fuzzer="$(swift build -c release --build-path .build-fuzz --show-bin-path)/orbit-fuzz"

mkdir -p fuzz/crashes
status=0
for target in "${targets[@]}"; do
  corpus="fuzz/corpus/$target"
  found="$(mktemp -d)"
  mkdir -p "$corpus"
  before=$(ls "$corpus" | wc -l)
  echo "== $target: ${seconds} s from $before kept inputs"
  if ! ORBIT_FUZZ_TARGET="$target" "$fuzzer" "$found" "$corpus" \
      -max_total_time="$seconds" -max_len=512 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="fuzz/crashes/$target-" -print_final_stats=1 2>"$found.log"; then
    status=1
    grep -E "orbit-fuzz|ERROR|Test unit written" "$found.log" || tail -20 "$found.log"
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$found.log" || true
  # Keep only inputs that add coverage to the kept corpus.
  ORBIT_FUZZ_TARGET="$target" "$fuzzer" -merge=1 "$corpus" "$found" 2>/dev/null >/dev/null
  echo "   kept corpus: $before -> $(ls "$corpus" | wc -l) inputs"
  rm -rf "$found" "$found.log"
done
exit $status
