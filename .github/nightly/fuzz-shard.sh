#!/usr/bin/env bash
# One shard of the nightly campaign: every target of targets.txt for SECONDS each, on the
# repository's seeds plus the corpus the earlier nights grew (nightly-corpus/, restored from
# the cache), with the regression store first and the known findings expected. Writes
# nightly-out/reports/NAME/ and nightly-out/corpus/NAME/ (the inputs that showed new
# behaviour). A shard only fails on a tool error (exit 2): the merge job decides on findings.
#   bash .github/nightly/fuzz-shard.sh I/N SECONDS
set -euo pipefail
cd "$(dirname "$0")/../.."
source .github/nightly/targets.sh
shard="$1"
seconds="$2"
# Every shard of one workflow run uses the same seed (they split its deterministic inputs).
seed="${GITHUB_RUN_ID:-0}"
# The targets' executables: this package's release build (the workflow's "Build release" step).
bin="$(swift build -c release --show-bin-path)"
# corrupt-fuzz itself: this repository's build, or the dependency's (see cli.sh).
cli="$(bash .github/nightly/cli.sh)"
out=nightly-out
mkdir -p "$out/reports" "$out/corpus" nightly-corpus work
while IFS='|' read -r name executable format corpus; do
    if [ ! -x "$bin/$executable" ]; then
        echo "::error::no $bin/$executable: build the targets first (swift build -c release)"
        exit 2
    fi
    seeds="work/seeds-$name"
    rm -rf "$seeds"
    folders=("$corpus")
    [ -d "nightly-corpus/$name" ] && folders+=("nightly-corpus/$name")
    "$cli" merge --corpus-output "$seeds" "${folders[@]}"
    status=0
    # shellcheck disable=SC2086  # the format options are words
    "$cli" run --target "$bin/$executable @@" --worker $format --corpus "$seeds" \
        --duration "${seconds}s" --timeout 500ms --shard "$shard" --seed "$seed" \
        --known-findings .github/nightly/known-findings.txt --regressions Corpus/regressions \
        --corpus-output "$out/corpus" --reports "$out/reports/$name" </dev/null || status=$?
    if [ "$status" -gt 1 ]; then
        echo "::error::corrupt-fuzz failed on $name (exit $status)"
        exit "$status"
    fi
done < <(nightly_targets)
