#!/usr/bin/env bash
# In-process speed beside libFuzzer, on the same loader (the hardened habit loader), the same
# seeds and the same machine, in one run: prints every rate and the ratios.
#   bash Benchmarks/Speed/run.sh [seconds] [rounds]
#
# The four run one after the other, `rounds` times (default 3), and each rate is the median of
# its rounds: on a shared virtual machine one run can be 30% slower than the next, so the
# measurements are interleaved rather than run in blocks.
#
# 1. libFuzzer, loader only: a -sanitize=fuzzer harness that calls HardenedHabitLoader.load
#    and nothing else (Benchmarks/Speed/libfuzzer-habit.swift): it sees crashes only.
# 2. corrupt-fuzz, crashes only: a CorruptFuzzTesting check without a format (byte mutations,
#    crashes, hangs, memory and the reasons every loader owes): the same job as 1.
# 3. corrupt-fuzz, full check: with the habit schema, its reference validator on every input
#    and structure-aware mutations on half of them, as a user's test runs it. The loader reads
#    [UInt8], so the check hands it the input's bytes (the [UInt8] overload), as harness 1
#    hands it an array of libFuzzer's input.
# 3b. The same full check through a Data closure that calls [UInt8](data) (the bytes copied
#    into a Data and back), for loaders written that way.
# 4. libFuzzer, full check: the same check through the libFuzzer bridge (Fuzz/Sources/
#    HabitLoaderHardenedFuzzer: the same schema's validator as oracle, its structure-aware
#    mutations as LLVMFuzzerCustomMutator): the same job as 3.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-10}"
rounds="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

swift build -c release --product corrupt-fuzz-speed >/dev/null
swiftc -O -sanitize=fuzzer -parse-as-library -module-name HabitFuzz \
    Examples/HabitLoaders/*.swift Benchmarks/Speed/libfuzzer-habit.swift -o "$work/habit-libfuzzer"
# Fuzz/ uses demo library products the main package declares only with CORRUPT_FUZZ_FUZZERS=1.
# Without a manifest cache: SwiftPM's shared cache can hand back the main package's manifest as
# evaluated without that variable (a checkout built before), and the products are then missing.
(cd Fuzz && CORRUPT_FUZZ_FUZZERS=1 swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library --manifest-cache none --product HabitLoaderHardenedFuzzer >/dev/null)

# libFuzzer's executions per second: rate_libfuzzer BINARY
rate_libfuzzer() {
    rm -rf "$work/corpus" && mkdir -p "$work/corpus" && cp Corpus/habits/*.habits "$work/corpus/"
    local n
    # A fuzzer that stops early (a finding, a broken build) prints no total: the rate is 0
    # and the row says so, rather than the script ending there.
    (cd "$work" && SWIFT_BACKTRACE=enable=no "$1" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1 || true)
    grep -h "mean input" "$work/log" >&2 || true
    n=$(awk '/stat::number_of_executed_units/ {n=$2} END {print n + 0}' "$work/log")
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

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$work/loader_only" >"$work/crashes" >"$work/check" >"$work/check_data" >"$work/bridge"
for round in $(seq 1 "$rounds"); do
    rate_libfuzzer "$work/habit-libfuzzer" >>"$work/loader_only"
    rate_corrupt crashes >>"$work/crashes"
    rate_corrupt check >>"$work/check"
    rate_corrupt check-data >>"$work/check_data"
    rate_libfuzzer "$PWD/Fuzz/.build/release/HabitLoaderHardenedFuzzer" >>"$work/bridge"
done
for name in loader_only crashes check check_data bridge; do echo "$name: $(tr '\n' ' ' <"$work/$name")" >&2; done
loader_only=$(median <"$work/loader_only")
crashes=$(median <"$work/crashes")
check=$(median <"$work/check")
check_data=$(median <"$work/check_data")
bridge=$(median <"$work/bridge")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / (b > 0 ? b : 1) }'; }
printf '%-66s %10s %8s\n' "hardened habit loader, ${seconds}s each, median of ${rounds} rounds" "inputs/s" "ratio"
printf '%-66s %10s\n' "libFuzzer, loader only" "$loader_only"
printf '%-66s %10s %8s\n' "corrupt-fuzz in-process, crashes only (vs libFuzzer, loader only)" "$crashes" "$(ratio "$crashes" "$loader_only")"
printf '%-66s %10s %8s\n' "corrupt-fuzz in-process, full check (vs libFuzzer, loader only)" "$check" "$(ratio "$check" "$loader_only")"
printf '%-66s %10s %8s\n' "  the same through a Data closure, [UInt8](data)" "$check_data" "$(ratio "$check_data" "$loader_only")"
printf '%-66s %10s %8s\n' "libFuzzer, full check through the bridge" "$bridge" ""
printf '%-66s %10s %8s\n' "corrupt-fuzz full check vs libFuzzer full check" "" "$(ratio "$check" "$bridge")"
