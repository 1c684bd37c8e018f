#!/usr/bin/env bash
# The release demo, N times in a row, on a loaded machine: `yes > /dev/null` (two, or as many
# as the third argument says: #49 asks for four) run beside each run (a two-core CI runner busy
# with something else). Prints, per run, its exit status, time and load, and every target's
# findings; a correct (hardened) loader must have none.
#   swift build -c release && bash Scripts/loaded-demo.sh [runs] [reports-folder] [yes-processes]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
runs="${1:-5}"
out="${2:-$(mktemp -d)}"
busy="${3:-2}"
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
    pids=()
    for _ in $(seq 1 "$busy"); do
        yes > /dev/null &
        pids+=($!)
    done
    start=$(date +%s)
    .build/release/corrupt-fuzz run --reports "$out/$i" > "$out/$i.log" 2>&1
    status=$?
    kill "${pids[@]}"
    echo "run $i: exit $status, $(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg)"
    python3 - "$out/$i" <<'PY'
import glob, json, sys
summary = json.load(open(glob.glob(sys.argv[1] + "/*/summary.json")[0]))
for target in summary["targets"]:
    kinds = sorted({f["kind"] for f in target["findings"]})
    print(f"  {target['name']}: {len(target['findings'])} findings {kinds} slowInputs={target.get('slowInputs', '-')}")
PY
done
echo "reports: $out"
