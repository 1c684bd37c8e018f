#!/usr/bin/env bash
# Pace of a campaign on an outside target: xmllint --noout on 20 of libxml2's test documents,
# --duration 30s, with --format xml (the hostile catalogue) and with byte mutations only.
# Prints, for each: seconds to the first input, peak resident memory of corrupt-fuzz (its own
# VmHWM, polled; and GNU time's, which is the largest of it and the targets it ran), wall time.
#   bash Benchmarks/pace/run.sh [BASELINE_CORRUPT_FUZZ]
# A baseline binary (an older release build) is measured the same way, in the same run.
# Needs xmllint (apt-get install libxml2-utils) and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swift build -c release --product corrupt-fuzz >/dev/null
cp "$(swift build -c release --show-bin-path)/corrupt-fuzz" "$work/corrupt-fuzz"
# The target notes when it first ran, then is xmllint.
cat >"$work/target.sh" <<TARGET
#!/bin/sh
[ -e "$work/first" ] || date +%s.%N >"$work/first"
exec xmllint --noout "\$1"
TARGET
chmod +x "$work/target.sh"

measure() { # label binary args...
    local label=$1 bin=$2
    shift 2
    rm -f "$work/first"
    local start
    start=$(date +%s.%N)
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" run --target "$work/target.sh @@" --corpus Benchmarks/pace/xml-seeds \
        --duration 30s --reports "$work/reports" "$@" >"$work/out" 2>&1 &
    local timer=$! own=0 pid="" hwm
    # corrupt-fuzz's own high-water mark (GNU time's is the largest of it and the targets it waited for).
    while kill -0 "$timer" 2>/dev/null; do
        [ -n "$pid" ] || pid=$(pgrep -P "$timer" || true)
        hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$hwm" ] && [ "$hwm" -gt "$own" ] && own=$hwm
        sleep 0.05
    done
    wait "$timer" || true
    local first execs
    first=$(awk -v s="$start" '{ printf "%.2f", $1 - s }' "$work/first" 2>/dev/null || echo "none")
    execs=$(grep -oE "done: [0-9]+ executions" "$work/out" | grep -oE "[0-9]+" || echo "?")
    read -r wall peak < <(tail -n 1 "$work/time")
    printf "%-28s first input %6ss  peak %7.1f MB (with targets %7.1f MB)  wall %6.1fs  executions %s\n" "$label" "$first" \
        "$(echo "$own / 1024" | bc -l)" "$(echo "$peak / 1024" | bc -l)" "$wall" "$execs"
}

measure "format xml" "$work/corrupt-fuzz" --format xml
measure "bytes only" "$work/corrupt-fuzz"
if [ $# -ge 1 ]; then
    measure "baseline: format xml" "$1" --format xml
    measure "baseline: bytes only" "$1"
fi
