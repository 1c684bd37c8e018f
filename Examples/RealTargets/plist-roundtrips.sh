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
    "$bin/corrupt-fuzz" roundtrip "$@" "${corpus[@]}" --timeout 10s --reports Reports/plist-roundtrips 2>/dev/null
    echo "exit $?"
}
run "plistlib reads and writes" --loader "$python digest @@" --writer "$python resave @@ @out"
run "Foundation reads and writes" --loader "$foundation digest @@" --writer "$foundation resave @@ @out"
run "plistlib writes, Foundation reads" --loader "$foundation digest @@" --writer "$python resave @@ @out"
run "Foundation writes, plistlib reads" --loader "$python digest @@" --writer "$foundation resave @@ @out"

# The two readers side by side: the same canonical text, or which one refuses the file.
echo "== plistlib and Foundation read each file"
same=0 differ=0 refused=0
for file in Corpus/plists/* Corpus/keyed-archives/*; do
    python_text=$($python digest "$file" 2>/dev/null); python_status=$?
    foundation_text=$("$foundation" digest "$file" 2>/dev/null); foundation_status=$?
    if [ $python_status -ne 0 ] || [ $foundation_status -ne 0 ]; then
        refused=$((refused + 1)); echo "  refused: $file (plistlib exit $python_status, Foundation exit $foundation_status)"
    elif [ "$python_text" = "$foundation_text" ]; then
        same=$((same + 1))
    else
        differ=$((differ + 1)); echo "  read differently: $file"
        diff <(echo "$python_text") <(echo "$foundation_text") | head -4 | sed 's/^/    /'
    fi
done
echo "same reading: $same, read differently: $differ, refused by one or both: $refused"
