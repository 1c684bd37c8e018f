#!/usr/bin/env bash
# The benchmark suite: every executor of corrupt-fuzz beside the peer tool on the same loader,
# in one invocation, with the ratios the project holds itself to.
#
#   bash Benchmarks/run.sh [seconds]        (default 20 seconds per measurement)
#
# - one process per input: corrupt-fuzz --jobs 1 beside AFL++'s afl-fuzz -n (which also starts
#   one process per input), on the same binaries and seeds; --jobs 2 beside --jobs 1;
# - persistent worker (--worker) beside one process per input, on the same loaders;
# - in-process (a CorruptFuzzTesting check) beside libFuzzer, both calling the same Swift
#   hardened habit loader (Benchmarks/Speed/run.sh).
# Needs afl++ (apt-get install afl++) and swiftc's -sanitize=fuzzer. BENCHMARKS.md records
# the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift build -c release >/dev/null
bin=$(swift build -c release --show-bin-path)
cf="$bin/corrupt-fuzz"
cc -O2 -o "$work/trivial-loader" Benchmarks/exec-speed/trivial-loader.c
cc -O2 -I Sources/CCorruptFuzzWorker/include -o "$work/trivial-worker" \
    Benchmarks/exec-speed/trivial-worker.c Sources/CCorruptFuzzWorker/corrupt_fuzz_worker.c

# corrupt-fuzz's executions per second: rate_cf NAME CORPUS JOBS ARGS...
rate_cf() {
    local name=$1 corpus=$2 jobs=$3
    shift 3
    "$cf" run "$@" --corpus "$corpus" --duration "${seconds}s" --jobs "$jobs" --no-minimize \
        --reports "$work/reports-$name" >/dev/null 2>&1 || true
    python3 -c 'import json,sys; print(round(sum(t["executions"] for t in json.load(open(sys.argv[1]))["targets"]) / '"$seconds"', 1))' \
        "$work/reports-$name/latest/summary.json"
}

# afl-fuzz -n's executions per second: rate_afl NAME CORPUS BINARY
rate_afl() {
    AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1 AFL_NO_AFFINITY=1 \
        timeout $((seconds + 30)) afl-fuzz -n -t 1000 -i "$2" -o "$work/afl-$1" -V "$seconds" -- "$3" @@ >/dev/null 2>&1 || true
    python3 - "$work/afl-$1" <<'PY'
import glob, sys
rows = [l for f in glob.glob(sys.argv[1] + "/**/plot_data", recursive=True) for l in open(f) if not l.startswith("#")]
fields = [x.strip() for x in rows[-1].split(",")] if rows else ["1"] + ["0"] * 12
print(round(float(fields[11]) / max(1.0, float(fields[0])), 1))
PY
}

ratio() { python3 -c "print(round($1 / max($2, 0.001), 2))"; }
row() { printf '%-58s %12s %10s\n' "$1" "$2" "$3"; }

habits=Corpus/habits
friends=Corpus/friend-lists
echo "corrupt-fuzz benchmark suite, $(date -u +%Y-%m-%d), ${seconds}s per measurement, $(nproc) cores"
row "measurement" "execs/s" "ratio"

afl=$(rate_afl trivial "$habits" "$work/trivial-loader")
one=$(rate_cf trivial1 "$habits" 1 --target "$work/trivial-loader @@")
two=$(rate_cf trivial2 "$habits" 2 --target "$work/trivial-loader @@")
worker=$(rate_cf trivialw "$habits" 1 --worker --target "$work/trivial-worker @@")
row "trivial C loader: afl-fuzz -n" "$afl" ""
row "trivial C loader: corrupt-fuzz --jobs 1 (vs afl-fuzz -n)" "$one" "$(ratio "$one" "$afl")"
row "trivial C loader: corrupt-fuzz --jobs 2 (vs --jobs 1)" "$two" "$(ratio "$two" "$one")"
row "trivial C loader: --worker --jobs 1 (vs one process per input)" "$worker" "$(ratio "$worker" "$one")"

afl=$(rate_afl naive "$habits" "$bin/habit-loader-naive")
one=$(rate_cf naive1 "$habits" 1 --target "$bin/habit-loader-naive @@" --schema Corpus/schemas/habit-tracker.ksy --timeout 200ms)
worker=$(rate_cf naivew "$habits" 1 --worker --target "$bin/habit-loader-naive @@" --schema Corpus/schemas/habit-tracker.ksy --timeout 200ms)
row "naive habit loader: afl-fuzz -n" "$afl" ""
row "naive habit loader: corrupt-fuzz --jobs 1 (vs afl-fuzz -n)" "$one" "$(ratio "$one" "$afl")"
row "naive habit loader: --worker (vs one process per input)" "$worker" "$(ratio "$worker" "$one")"

afl=$(rate_afl friends "$friends" "$bin/friend-list-hardened")
one=$(rate_cf friends1 "$friends" 1 --target "$bin/friend-list-hardened @@" --format friend-list)
two=$(rate_cf friends2 "$friends" 2 --target "$bin/friend-list-hardened @@" --format friend-list)
worker=$(rate_cf friendsw "$friends" 1 --worker --target "$bin/friend-list-hardened @@" --format friend-list)
row "hardened friend-list loader: afl-fuzz -n" "$afl" ""
row "hardened friend-list loader: corrupt-fuzz --jobs 1 (vs afl-fuzz -n)" "$one" "$(ratio "$one" "$afl")"
row "hardened friend-list loader: --jobs 2 (vs --jobs 1)" "$two" "$(ratio "$two" "$one")"
row "hardened friend-list loader: --worker (vs one process per input)" "$worker" "$(ratio "$worker" "$one")"

echo
bash Benchmarks/Speed/run.sh "$seconds" 3
