#!/usr/bin/env bash
# Two builds of orbit-bench, one sitting: each benchmark runs with the first binary, the second,
# the first and the second again (ABAB), so that a drift of the machine over the sitting shows as
# a difference between the two runs of one binary, and falls on both builds alike, rather than
# as a difference between the builds. The outputs go to a folder, one file per run.
#
#   scripts/bench-compare.sh BEFORE_BIN AFTER_BIN [OUT_DIR] [benchmark ...]
#
# BEFORE_BIN and AFTER_BIN are orbit-bench binaries built with `swift build -c release
# --product orbit-bench` in two checkouts (a `git worktree add` of the older commit is the
# easiest). Benchmarks default to: client, money, chat, live (1,000 sockets). Each starts its
# own throwaway cluster, as root or not (docs/benchmarks.md).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 64
fi
before=$1
after=$2
out=${3:-bench-compare-$(date -u +%Y%m%dT%H%M%SZ)}
shift $(($# < 3 ? $# : 3))
benchmarks=("$@")
if [[ ${#benchmarks[@]} -eq 0 ]]; then
    benchmarks=(client money chat "live --sockets 1000")
fi
for binary in "$before" "$after"; do
    [[ -x $binary ]] || { echo "not an executable: $binary" >&2; exit 66; }
done
mkdir -p "$out"
echo "before: $before"
echo "after:  $after"
echo "out:    $out"
for benchmark in "${benchmarks[@]}"; do
    name=${benchmark%% *}
    for run in before-1 after-1 before-2 after-2; do
        case $run in
            after-*) binary=$after ;;
            *) binary=$before ;;
        esac
        echo "== $benchmark ($run) $(date -u +%H:%M:%S)"
        # shellcheck disable=SC2086 # the benchmark's own arguments
        "$binary" $benchmark > "$out/$name-$run.txt" 2>&1 || {
            echo "failed: $binary $benchmark (see $out/$name-$run.txt)" >&2
            exit 1
        }
    done
done
echo "done: $out"
