#!/usr/bin/env bash
# The nightly merge: the shards' reports into one (nightly-merged/latest: junit.xml,
# summary.json, findings/ with every reproducer), their corpora into nightly-corpus/ for the
# next night's cache, and the verdict in nightly-merged/status: 0 no new findings, 1 new
# findings (listed in nightly-merged/new-findings.txt, in the known-findings file's syntax).
#   bash .github/nightly/merge.sh SHARDS-DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
source .github/nightly/targets.sh
shards="$1"
# corrupt-fuzz itself: this repository's build, or the dependency's (see cli.sh).
cli="$(bash .github/nightly/cli.sh)"
mkdir -p nightly-merged nightly-corpus
reports=()
# Each shard wrote one run folder per target; `latest` (a link to it, which artifact uploads
# may turn into a copy) is left out, so no run counts twice. A run its step's timeout killed
# has no report.json, but each finding it had found in found/, which merge reads.
for folder in "$shards"/*/reports/*/*/; do
    folder="${folder%/}"
    [ "$(basename "$folder")" != latest ] || continue
    if [ -f "$folder/report.json" ] || [ -d "$folder/found" ]; then reports+=("$folder"); fi
done
if [ ${#reports[@]} -eq 0 ]; then
    echo "::error::no shard wrote a report"
    echo 2 >nightly-merged/status
    exit 0
fi
status=0
"$cli" merge "${reports[@]}" --reports nightly-merged \
    --known-findings .github/nightly/known-findings.txt --new-findings-file nightly-merged/new-findings.txt || status=$?
echo "$status" >nightly-merged/status
xmllint --noout nightly-merged/latest/junit.xml
# The corpus cache: the earlier nights' corpus and the shards' new inputs, minimized through the
# target (cmin: the smallest file of each edge of an instrumented target and of each behaviour,
# findings left out), so it stops growing once nothing new is found. Without the target's build
# (the "Build release (the targets)" step) they are only united.
bin="$(swift build -c release --show-bin-path 2>/dev/null || true)"
while IFS='|' read -r name executable format _; do
    grown=()
    for folder in "$shards"/*/corpus/"$name"; do [ -d "$folder" ] && grown+=("$folder"); done
    [ ${#grown[@]} -gt 0 ] || continue
    if [ -n "$bin" ] && [ -x "$bin/$executable" ]; then
        sources=("${grown[@]}")
        [ -d "nightly-corpus/$name" ] && sources+=("nightly-corpus/$name")
        rm -rf "nightly-corpus.min/$name"
        # shellcheck disable=SC2086 # the format options are words
        if "$cli" merge --corpus-output "nightly-corpus.min/$name" "${sources[@]}" --target "$bin/$executable @@" $format; then
            rm -rf "nightly-corpus/$name"
            mv "nightly-corpus.min/$name" "nightly-corpus/$name"
            continue
        fi
        echo "::warning::minimizing the corpus of $name failed: its files are united instead"
    fi
    "$cli" merge --corpus-output "nightly-corpus/$name" "${grown[@]}"
done < <(nightly_targets)
rm -rf nightly-corpus.min
if [ "$status" -eq 1 ]; then
    echo "New findings (add these lines to .github/nightly/known-findings.txt to accept them, or fix them):"
    cat nightly-merged/new-findings.txt
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        echo "### Nightly fuzz"
        echo '```'
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(f"{t[\"name\"]}: {t[\"executions\"]} executions, {len(t[\"findings\"])} findings, {t[\"newFindings\"]} new") for t in d["targets"]]' nightly-merged/latest/summary.json 2>/dev/null || true
        echo '```'
    } >>"$GITHUB_STEP_SUMMARY"
fi
