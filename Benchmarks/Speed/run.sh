#!/usr/bin/env bash
# In-process speed beside libFuzzer, on the same loader (the hardened habit loader), the same
# seeds and the same machine, in one run: prints both rates and the ratio.
#   bash Benchmarks/Speed/run.sh [seconds]
# libFuzzer runs the loader alone (its harness calls HardenedHabitLoader.load); corrupt-fuzz's
# check also runs the format's reference validator where the verdict matters, the oracle and
# the structure-aware mutations, as a user's test does.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

swift build -c release --product corrupt-fuzz-speed >/dev/null
swiftc -O -sanitize=fuzzer -parse-as-library -module-name HabitFuzz \
    Examples/HabitLoaders/*.swift Benchmarks/Speed/libfuzzer-habit.swift -o "$work/habit-libfuzzer"

mkdir -p "$work/corpus"
cp Corpus/habits/*.habits "$work/corpus/"
libfuzzer=$("$work/habit-libfuzzer" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" 2>&1 \
    | awk '/stat::number_of_executed_units/ {n=$2} END {print n}')
libfuzzer_rate=$((libfuzzer / seconds))

# Runs for about the same time: first a short calibration, then the measured run.
probe=$(.build/release/corrupt-fuzz-speed 50000 | sed -E 's/.* = ([0-9]+) inputs\/s.*/\1/')
line=$(.build/release/corrupt-fuzz-speed $((probe * seconds)))
corrupt_rate=$(echo "$line" | sed -E 's/.* = ([0-9]+) inputs\/s.*/\1/')

echo "libFuzzer (loader only):       $libfuzzer_rate inputs/s"
echo "$line"
awk -v a="$corrupt_rate" -v b="$libfuzzer_rate" 'BEGIN { printf "ratio corrupt-fuzz / libFuzzer: %.3f\n", a / b }'
