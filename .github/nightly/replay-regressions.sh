#!/usr/bin/env bash
# The pull-request check: replays every input of the regression store (Corpus/regressions/NAME/)
# against its target. A finding the known-findings file lists is expected; any other fails the
# check: a bug that was fixed came back, or an input committed to the store still fails.
#   bash .github/nightly/replay-regressions.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source .github/nightly/targets.sh
# The targets' executables: this package's release build (the workflow's "Build release" step).
bin="$(swift build -c release --show-bin-path)"
# corrupt-fuzz itself: this repository's build, or the dependency's (see cli.sh).
cli="$(bash .github/nightly/cli.sh)"
status=0
replayed=0
while IFS='|' read -r name executable format _; do
    folder="Corpus/regressions/$name"
    [ -d "$folder" ] || continue
    files=()
    while IFS= read -r -d '' file; do files+=("$file"); done < <(find "$folder" -maxdepth 1 -type f ! -name '.*' -print0 | sort -z)
    [ ${#files[@]} -gt 0 ] || continue
    if [ ! -x "$bin/$executable" ]; then
        echo "::error::no $bin/$executable: build the targets first (swift build -c release)"
        exit 2
    fi
    replayed=$((replayed + ${#files[@]}))
    # shellcheck disable=SC2086  # the format options are words
    "$cli" replay --target "$bin/$executable @@" $format --timeout 2s --name "$name" \
        --known-findings .github/nightly/known-findings.txt "${files[@]}" || { s=$?; [ "$s" -gt "$status" ] && status=$s; }
done < <(nightly_targets)
echo "replayed $replayed inputs of the regression store"
exit "$status"
