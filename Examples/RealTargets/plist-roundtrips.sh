#!/usr/bin/env bash
# Round trips of real property lists through two implementations no one here wrote, and each
# through the other: Python's plistlib and Foundation's PropertyListSerialization
# (Examples/PlistHarness). Reports go to Reports/ (one folder per check).
#
#   bash Examples/RealTargets/plist-roundtrips.sh [corrupt-fuzz products folder]
set -uo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build -c release --show-bin-path)}"
python="python3 $(pwd)/Examples/RealTargets/plistlib-roundtrip.py"
foundation="$bin/plist-harness"
corpus=(--corpus Corpus/plists --corpus Corpus/keyed-archives)
run() {
    local title="$1"; shift
    echo "== $title"
    "$bin/corrupt-fuzz" roundtrip "$@" "${corpus[@]}" --reports Reports/plist-roundtrips 2>/dev/null
    echo "exit $?"
}
run "plistlib reads and writes" --loader "$python digest @@" --writer "$python resave @@ @out"
run "Foundation reads and writes" --loader "$foundation digest @@" --writer "$foundation resave @@ @out"
run "plistlib writes, Foundation reads" --loader "$foundation digest @@" --writer "$python resave @@ @out"
run "Foundation writes, plistlib reads" --loader "$python digest @@" --writer "$foundation resave @@ @out"
