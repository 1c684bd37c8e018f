#!/usr/bin/env python3
"""Time to each planted bug of the naive habit-tracker loader: byte-level campaign versus
schema-aware campaign, side by side, same seeds, same machine, same run.

    python3 Benchmarks/schema-vs-bytes/run.py [--seconds 30] [--seeds 0 1 2]

Byte-level: --format habit-tracker (the hand-written reference validator, byte mutators only).
Schema-aware: --schema Corpus/schemas/habit-tracker.ksy (the schema's validator, its catalogue
and structure-aware mutations mixed with byte mutators). Prints, per planted bug, the median
seconds to first hit over the seeds (or "-" when a campaign never hit it), and the ratio.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Planted bugs of Examples/HabitLoaderNaive/main.swift, recognised by kind and signature.
BUGS = [
    ("crash: missing file force-unwrapped", "crash", r"nil while unwrapping"),
    # Release builds print no "Fatal error" line for bounds checks: any crash but the missing file.
    ("crash: lying length/count sliced", "crash", r"^(?!.*nil while unwrapping).*Parser"),
    ("hang: calendar walk over a corrupt date", "hang", r""),
    ("oom: reserveCapacity(untrusted count)", "oom", r""),
    ("silent-acceptance: future version", "silent-acceptance", r"unsupported-version"),
    ("silent-acceptance: wrong CRC", "silent-acceptance", r"(crc|checksum)"),
    ("silent-acceptance: date out of range/order", "silent-acceptance", r"dates"),
    ("wrong-reason: empty file called corrupt", "wrong-reason", r"expected empty"),
]


def run(binary, loader, mode, seed, seconds, reports):
    args = [binary, "run", "--target", f"{loader} @@", "--corpus", os.path.join(ROOT, "Corpus/habits"),
            "--duration", f"{seconds}s", "--seed", str(seed), "--timeout", "500ms", "--no-minimize",
            "--reports", reports]
    args += ["--format", "habit-tracker"] if mode == "bytes" else ["--schema", os.path.join(ROOT, "Corpus/schemas/habit-tracker.ksy")]
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(reports, "latest", "summary.json")) as f:
        target = json.load(f)["targets"][0]
    times = {}
    for name, kind, pattern in BUGS:
        hits = [f["firstSeconds"] for f in target["findings"] if f["kind"] == kind and re.search(pattern, f["signature"] + " " + f.get("detail", ""))]
        times[name] = min(hits) if hits else None
    return times, target["executions"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    options = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    bin_dir = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
    binary, loader = os.path.join(bin_dir, "corrupt-fuzz"), os.path.join(bin_dir, "habit-loader-naive")
    results = {"bytes": [], "schema": []}
    with tempfile.TemporaryDirectory() as work:
        for seed in options.seeds:
            for mode in ("bytes", "schema"):
                times, execs = run(binary, loader, mode, seed, options.seconds, os.path.join(work, f"{mode}-{seed}"))
                results[mode].append(times)
                print(f"seed {seed} {mode:6}: {execs} executions", file=sys.stderr)

    def median(mode, name):
        values = [r[name] for r in results[mode] if r[name] is not None]
        missing = len(results[mode]) - len(values)
        if len(values) * 2 <= len(results[mode]):
            return None, missing
        return statistics.median(values), missing

    print(f"{'planted bug (median s to first hit, ' + str(len(options.seeds)) + ' seeds x ' + str(options.seconds) + 's)':58} {'bytes':>8} {'schema':>8} {'ratio':>7}")
    for name, _, _ in BUGS:
        b, bm = median("bytes", name)
        s, sm = median("schema", name)
        fmt = lambda v, m: "-" if v is None else f"{v:.3f}" + ("*" if m else "")
        ratio = f"{b / s:.1f}x" if b is not None and s is not None and s > 0 else ("inf" if s is not None and b is None else "")
        print(f"{name:58} {fmt(b, bm):>8} {fmt(s, sm):>8} {ratio:>7}")
    print("(- : not found in most runs; * : missed in some runs; ratio = bytes / schema)")


if __name__ == "__main__":
    main()
