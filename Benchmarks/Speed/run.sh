#!/usr/bin/env bash
# In-process speed beside libFuzzer, on the same loader (the hardened habit loader), the same
# seeds and the same machine, in one run: prints every rate and the ratios.
#   bash Benchmarks/Speed/run.sh [seconds]
#
# 1. libFuzzer, loader only: a -sanitize=fuzzer harness that calls HardenedHabitLoader.load
#    and nothing else (Benchmarks/Speed/libfuzzer-habit.swift): it sees crashes only.
# 2. corrupt-fuzz, crashes only: a CorruptFuzzTesting check without a format (byte mutations,
#    crashes, hangs, memory and the reasons every loader owes): the same job as 1.
# 3. corrupt-fuzz, full check: with the habit schema, its reference validator on every input
#    and structure-aware mutations on half of them, as a user's test runs it.
# 4. libFuzzer, full check: the same check through the libFuzzer bridge (Fuzz/Sources/
#    HabitLoaderHardenedFuzzer: the same schema's validator as oracle, its structure-aware
#    mutations as LLVMFuzzerCustomMutator): the same job as 3.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

swift build -c release --product corrupt-fuzz-speed >/dev/null
swiftc -O -sanitize=fuzzer -parse-as-library -module-name HabitFuzz \
    Examples/HabitLoaders/*.swift Benchmarks/Speed/libfuzzer-habit.swift -o "$work/habit-libfuzzer"
(cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library --product HabitLoaderHardenedFuzzer >/dev/null)

# libFuzzer's executions per second: rate_libfuzzer BINARY
rate_libfuzzer() {
    rm -rf "$work/corpus" && mkdir -p "$work/corpus" && cp Corpus/habits/*.habits "$work/corpus/"
    local n
    n=$(cd "$work" && SWIFT_BACKTRACE=enable=no "$1" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" 2>&1 \
        | awk '/stat::number_of_executed_units/ {n=$2} END {print n + 0}')
    echo $((n / seconds))
}

# corrupt-fuzz's: a short calibration, then a run of about the same length.
rate_corrupt() {
    local probe line
    probe=$(.build/release/corrupt-fuzz-speed 50000 "$1" | sed -E 's/.* = ([0-9]+) inputs\/s.*/\1/')
    line=$(.build/release/corrupt-fuzz-speed $((probe * seconds)) "$1")
    echo "$line" >&2
    echo "$line" | sed -E 's/.* = ([0-9]+) inputs\/s.*/\1/'
}

loader_only=$(rate_libfuzzer "$work/habit-libfuzzer")
crashes=$(rate_corrupt crashes)
check=$(rate_corrupt check)
bridge=$(rate_libfuzzer "$PWD/Fuzz/.build/release/HabitLoaderHardenedFuzzer")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / (b > 0 ? b : 1) }'; }
printf '%-66s %10s %8s\n' "measurement (hardened habit loader, ${seconds}s each)" "inputs/s" "ratio"
printf '%-66s %10s\n' "libFuzzer, loader only" "$loader_only"
printf '%-66s %10s %8s\n' "corrupt-fuzz in-process, crashes only (vs libFuzzer, loader only)" "$crashes" "$(ratio "$crashes" "$loader_only")"
printf '%-66s %10s %8s\n' "corrupt-fuzz in-process, full check (vs libFuzzer, loader only)" "$check" "$(ratio "$check" "$loader_only")"
printf '%-66s %10s %8s\n' "libFuzzer, full check through the bridge (vs corrupt-fuzz's check)" "$bridge" "$(ratio "$bridge" "$check")"
