#!/usr/bin/env bash
# Fails the nightly job when the merge found new findings (status 1) or could not merge (2).
set -euo pipefail
cd "$(dirname "$0")/../.."
status="$(cat nightly-merged/status 2>/dev/null || echo 2)"
case "$status" in
    0) echo "no new findings" ;;
    1) echo "::error::new findings: see the junit report and the nightly-findings artifact"; cat nightly-merged/new-findings.txt; exit 1 ;;
    *) echo "::error::the merge failed (status $status)"; exit 2 ;;
esac
