#!/usr/bin/env python3
"""Replays every campaign finding of a report folder with its printed command, from the
repository root, and counts those that show their own finding again (kind and signature), or,
for a worker's finding that a fresh process does not show, what its report says the replay shows
(`freshProcessFinding`).

    python3 Scripts/replay-all.py Reports/latest
"""
import glob
import json
import os
import subprocess
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "Reports/latest"
summaries = glob.glob(os.path.join(folder, "summary.json")) or glob.glob(os.path.join(folder, "*", "summary.json"))
if not summaries:
    sys.exit(f"no summary.json in {folder}")
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
total = replayed = worker_only = 0
for target in json.load(open(summaries[0]))["targets"]:
    for finding in target["findings"]:
        command = finding.get("replay", "")
        # Checks of versions, writers and crash points replay by commands of their own.
        if " replay --target " not in command:
            continue
        total += 1
        output = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300).stdout
        # A worker's finding that a fresh process does not show says what its replay shows.
        instead = finding.get("freshProcessFinding")
        worker_only += instead is not None
        if instead == "none":
            shows = bool(output) and "finding: " not in output
        else:
            shows = f"finding: {instead or finding['kind'] + ': ' + finding['signature']}" in output
        if shows:
            replayed += 1
        else:
            first = output.splitlines()[0] if output else "(no output)"
            print(f"{target['name']}: {finding['kind']}: {finding['signature'][:100]}\n  replayed as: {first[:200]}")
print(f"{replayed} of {total} reproducers replayed to their own finding "
      f"({worker_only} of them found by a worker and marked as showing otherwise in a fresh process)")
sys.exit(0 if replayed == total else 1)
