#!/usr/bin/env bash
# Executions per second of corrupt-fuzz next to AFL++ (`afl-fuzz -n`, one execve per input,
# as corrupt-fuzz does) on the same trivial C loader and seeds, in the same run.
#
#   bash Benchmarks/exec-speed/run.sh [seconds]      (default 30 seconds per fuzzer)
#
# Needs afl++ (apt-get install afl++). Both fuzzers get one core (--jobs 1); corrupt-fuzz
# is also measured with --jobs 2 for reference. Prints a table and the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cc -O2 -o "$work/trivial-loader" Benchmarks/exec-speed/trivial-loader.c
mkdir -p "$work/seeds"
cp Corpus/habits/*.habits "$work/seeds/"
swift build -c release --product corrupt-fuzz >/dev/null
cf=$(swift build -c release --show-bin-path)/corrupt-fuzz

rate_cf() {  # jobs
    "$cf" run --target "$work/trivial-loader @@" --corpus "$work/seeds" --duration "${seconds}s" \
        --jobs "$1" --no-minimize --reports "$work/reports-$1" >/dev/null 2>&1 || true
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["executionsPerSecond"])' "$work/reports-$1/latest/summary.json"
}

rate_afl() {
    AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1 \
        timeout $((seconds + 30)) afl-fuzz -n -i "$work/seeds" -o "$work/afl" -V "$seconds" -- "$work/trivial-loader" @@ >/dev/null 2>&1 || true
    # plot_data's last row: relative_time (s) ... total_execs; -n mode writes it straight into -o.
    python3 - "$work/afl" <<'PY'
import glob, sys
rows = [l for f in glob.glob(sys.argv[1] + "/**/plot_data", recursive=True) for l in open(f) if not l.startswith("#")]
fields = [x.strip() for x in rows[-1].split(",")]
print(round(float(fields[11]) / max(1.0, float(fields[0])), 1))
PY
}

cf1=$(rate_cf 1)
afl=$(rate_afl)
cf2=$(rate_cf 2)
ratio=$(python3 -c "print(round($cf1 / $afl, 2))")
printf '%-36s %12s\n' "fuzzer (trivial C loader, ${seconds}s)" "execs/s"
printf '%-36s %12s\n' "afl-fuzz -n (1 core)" "$afl"
printf '%-36s %12s\n' "corrupt-fuzz --jobs 1" "$cf1"
printf '%-36s %12s\n' "corrupt-fuzz --jobs 2" "$cf2"
echo "ratio corrupt-fuzz/afl-fuzz on one core: $ratio"
