#!/usr/bin/env python3
"""Seconds to each distinct app-rule finding: a naive loader judged by its hardened twin as the
app's validator (`--validator`), one process per input (no worker), two builds of corrupt-fuzz
side by side, same loaders, same seeds, same run.

    python3 Benchmarks/first-findings/app-rules.py [--before DIR] --after DIR [--loaders DIR]
        [--seconds 60] [--seeds 0 1 2] [--jobs 2] [--pair friend-list|notes]

DIR holds a `corrupt-fuzz` binary; --loaders (default: --after) holds the loaders, used by both
sides. Each campaign: `corrupt-fuzz run --target 'NAIVE @@' --validator 'HARDENED @@' --format F
--corpus C --duration Ns --seed S --timeout 500ms --no-minimize --jobs J`. Prints, per finding
signature (silent acceptances and wrong reasons: the app's rules), the median seconds to its
first hit over the seeds that found it, on each side, and how many seeds found it.
"""
import argparse, json, os, statistics, subprocess, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAIRS = {
    "friend-list": ("friend-list-naive", "friend-list-hardened", "friend-list", "Corpus/friend-lists"),
    "notes": ("notes-loader-naive", "notes-loader-hardened", "notes", "Corpus/notes"),
}


def campaign(binary, loaders, pair, seconds, seed, jobs, reports):
    naive, hardened, fmt, corpus = PAIRS[pair]
    command = [binary, "run", "--target", f"{loaders}/{naive} @@", "--validator", f"{loaders}/{hardened} @@",
               "--format", fmt, "--corpus", os.path.join(ROOT, corpus), "--duration", f"{seconds}s", "--seed", str(seed),
               "--timeout", "500ms", "--no-minimize", "--jobs", str(jobs), "--reports", reports]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds * 3 + 120)
    target = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
    found = {}
    for finding in target["findings"]:
        if finding["kind"] in ("silent-acceptance", "wrong-reason", "false-rejection"):
            found[f'{finding["kind"]}: {finding["signature"]}'] = finding["firstSeconds"]
    return found, target["executions"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="omitted: the --after build alone")
    parser.add_argument("--after", required=True)
    parser.add_argument("--loaders")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pair", choices=sorted(PAIRS), default="friend-list")
    args = parser.parse_args()
    loaders = os.path.abspath(args.loaders or args.after)
    sides = {"before": os.path.abspath(os.path.join(args.before, "corrupt-fuzz"))} if args.before else {}
    sides["after"] = os.path.abspath(os.path.join(args.after, "corrupt-fuzz"))
    results = {side: [] for side in sides}
    executions = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as work:
        for index, seed in enumerate(args.seeds):
            order = list(sides) if index % 2 == 0 else list(reversed(sides))
            for side in order:
                found, runs = campaign(sides[side], loaders, args.pair, args.seconds, seed, args.jobs, os.path.join(work, f"{side}-{seed}"))
                results[side].append(found)
                executions[side].append(runs)
    signatures = sorted({s for side in results.values() for found in side for s in found},
                        key=lambda s: min([f[s] for side in results.values() for f in side if s in f]))
    print(f"{args.pair}: {args.seconds} s per campaign, seeds {args.seeds}, jobs {args.jobs}; "
          "executions per campaign (median) " + ", ".join(f"{side} {statistics.median(executions[side])}" for side in sides) + "\n")
    print("| finding | " + " | ".join(f"{side}: median s (seeds)" for side in sides) + " |")
    print("|---|" + "---:|" * len(sides))
    for signature in signatures:
        cells = []
        for side in sides:
            times = [found[signature] for found in results[side] if signature in found]
            cells.append(f"{statistics.median(times):.1f} ({len(times)}/{len(args.seeds)})" if times else f"- (0/{len(args.seeds)})")
        print(f"| `{signature[:110]}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
