#!/usr/bin/env bash
# Seconds to the first crash of a loader that sleeps 10 ms per start (what a Swift loader that
# links Foundation costs) and aborts on any same-length change behind its 4-byte magic, with
# five 4 KiB seeds: any single random mutation crashes it, so a schedule that runs every
# truncation before havoc finds it late. Two builds side by side, same run.
#
#   bash Benchmarks/first-findings/shallow.sh OLD/corrupt-fuzz NEW/corrupt-fuzz [seconds]
set -euo pipefail
old=$1 new=$2 seconds=${3:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 "$here/shallow-crash.c" -o "$work/loader"
mkdir -p "$work/corpus"
python3 - "$work/corpus" <<'PY'
import sys
for s in range(5):
    b = bytearray(b"HABT") + bytearray(4092)
    b[4] = s * 13
    for i in range(5, 4096): b[i] = (i * 7 + b[4]) & 0xFF
    open(f"{sys.argv[1]}/seed{s}.bin", "wb").write(b)
PY
for bin in "$old" "$new"; do
    "$bin" run --target "$work/loader @@" --corpus "$work/corpus" --duration "${seconds}s" --no-minimize \
        --reports "$work/reports" --jobs 2 >/dev/null 2>&1 || true
    python3 - "$bin" "$work/reports/latest/summary.json" <<'PY'
import json, sys
target = json.load(open(sys.argv[2]))["targets"][0]
crashes = [f for f in target["findings"] if f["kind"] == "crash"]
first = min(crashes, key=lambda f: f["firstSeconds"]) if crashes else None
print(f"{sys.argv[1]}: {target['executions']} executions; first crash " +
      (f"after {first['firstSeconds']} s (execution {first['firstExecution']})" if first else "never"))
PY
done
