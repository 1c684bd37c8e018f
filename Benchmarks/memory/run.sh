#!/usr/bin/env bash
# Resident memory of corrupt-fuzz over a long campaign: the hardened friend-list loader as a
# persistent worker, two jobs, VmRSS of corrupt-fuzz sampled every 30 seconds.
#   bash Benchmarks/memory/run.sh [minutes, default 10]
# Prints "seconds kilobytes" lines, then the growth from the first sample to the largest. The
# campaign's report (and any finding's reproducer) is kept in Reports/memory-benchmark/.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes="${1:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

swift build -c release >/dev/null
bin=$(swift build -c release --show-bin-path)
# Copies, so a build during the run cannot replace the binaries under it.
cp "$bin/corrupt-fuzz" "$bin/friend-list-hardened" "$work/"
"$work/corrupt-fuzz" run --worker --target "$work/friend-list-hardened @@" --format friend-list --jobs 2 \
    --duration "${minutes}m" --corpus Corpus/friend-lists --reports Reports/memory-benchmark --no-minimize >"$work/log" 2>&1 &
pid=$!
: >"$work/rss"
for i in $(seq 1 $((minutes * 2))); do
    sleep 30
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && echo "$((i * 30)) $rss" | tee -a "$work/rss"
done
wait "$pid" || true
grep -E "execs" "$work/log" | tail -1
grep -E "^Report:" "$work/log" || true
awk 'NR == 1 { first = $2 } { if ($2 > peak) peak = $2 } END { printf "first %d kB, peak %d kB, growth %.1f%%\n", first, peak, 100 * (peak - first) / first }' "$work/rss"
