#!/usr/bin/env bash
# The libFuzzer bridge on the naive habit loader (Fuzz/Sources/HabitLoaderNaiveFuzzer), side by
# side, same machine, same binary but for the custom mutator:
#   1. time to the first crash from an empty corpus, with the bridge's custom mutator (the
#      schema's structure-aware mutations) and without it (libFuzzer's byte mutations only:
#      the same harness built with -D CORRUPT_FUZZ_BYTES_ONLY); CORRUPT_FUZZ_TRAPS=none, so
#      only the loader's own crashes stop the run, as in plain libFuzzer;
#   2. silent acceptance: runs with CORRUPT_FUZZ_TRAPS=silent-acceptance from the seed corpus;
#      for each input the bridge trapped, plain libFuzzer (the same loader, no traps) is shown
#      to run it without a word.
#   bash Benchmarks/libfuzzer-bridge/run.sh [runs per variant, default 5] [seconds per run, default 120]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-5}"
limit="${2:-120}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SWIFT_BACKTRACE=enable=no
# Fuzz/ uses demo library products the main package declares only with this set.
export CORRUPT_FUZZ_FUZZERS=1

flags=(-c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library --product HabitLoaderNaiveFuzzer)
(cd Fuzz && swift build "${flags[@]}" >/dev/null && swift build "${flags[@]}" -Xswiftc -DCORRUPT_FUZZ_BYTES_ONLY --build-path .build-bytes-only >/dev/null)
custom="$PWD/Fuzz/.build/release/HabitLoaderNaiveFuzzer"
bytes="$PWD/Fuzz/.build-bytes-only/release/HabitLoaderNaiveFuzzer"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run until the first saved input; prints "seconds executions".
first_crash() {
    local binary="$1" seed="$2" dir
    dir="$(mktemp -d "$work/run.XXXX")"
    local start end
    start=$(date +%s.%N)
    (cd "$dir" && CORRUPT_FUZZ_TRAPS=none "$binary" -seed="$seed" -max_total_time="$limit" >log 2>&1) || true
    end=$(date +%s.%N)
    local executions
    executions=$(grep -oE '^#[0-9]+' "$dir/log" | tail -1 | tr -d '#')
    if compgen -G "$dir/crash-*" >/dev/null || compgen -G "$dir/oom-*" >/dev/null || compgen -G "$dir/timeout-*" >/dev/null; then
        awk -v a="$start" -v b="$end" -v n="${executions:-0}" 'BEGIN { printf "%.3f %s\n", b - a, n }'
    else
        echo "none ${executions:-0}"
    fi
}

echo "== 1. time to the first crash, empty corpus, $runs runs each (seeds 1..$runs, limit ${limit}s) =="
for variant in custom bytes; do
    binary="${!variant}"
    : >"$work/$variant.times"
    for seed in $(seq 1 "$runs"); do
        read -r seconds executions < <(first_crash "$binary" "$seed")
        echo "  $variant seed $seed: $seconds s, $executions executions"
        [ "$seconds" != none ] && echo "$seconds" >>"$work/$variant.times"
    done
done
custom_median=$(median <"$work/custom.times")
bytes_median=$(median <"$work/bytes.times")
echo "median time to first crash: custom mutator ${custom_median}s ($(wc -l <"$work/custom.times")/$runs runs crashed), libFuzzer's mutations only ${bytes_median}s ($(wc -l <"$work/bytes.times")/$runs runs crashed)"

echo
echo "== 2. silent acceptance (CORRUPT_FUZZ_TRAPS=silent-acceptance, seed corpus Corpus/habits) =="
found=0
for seed in $(seq 1 "$runs"); do
    dir="$(mktemp -d "$work/silent.XXXX")"
    cp Corpus/habits/*.habits "$dir/"
    mkdir "$dir/corpus" && mv "$dir"/*.habits "$dir/corpus/"
    (cd "$dir" && CORRUPT_FUZZ_TRAPS=silent-acceptance "$custom" -seed="$seed" -max_total_time=30 corpus >log 2>&1) || true
    signature=$(grep -m1 '==corrupt-fuzz== signature: ' "$dir/log" | sed 's/==corrupt-fuzz== signature: //' || true)
    artifact=$(ls "$dir"/crash-* 2>/dev/null | head -1 || true)
    if [ -n "$signature" ] && [ -n "$artifact" ]; then
        found=$((found + 1))
        # Plain libFuzzer: the same loader, nothing but its crashes (no traps, no validator).
        if (cd "$dir" && CORRUPT_FUZZ_TRAPS=none "$bytes" "$artifact" >plain.log 2>&1); then plain="plain libFuzzer runs it without a finding"; else plain="plain libFuzzer crashes on it too"; fi
        echo "  seed $seed: silent-acceptance: $signature ($(wc -c <"$artifact") bytes); $plain"
    else
        echo "  seed $seed: the first trap was a crash of the loader ($(grep -m1 -oE 'deadly signal|out-of-memory|timeout' "$dir/log" || echo '?'))"
    fi
done
echo "silent acceptance caught in $found of $runs runs"
