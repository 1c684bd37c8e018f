#!/usr/bin/env python3
"""What coverage costs: inputs/s of the bundled hardened loaders as persistent workers, built
plain and built with SanitizerCoverage (CORRUPT_FUZZ_COVERAGE=1), with coverage read and with
--no-coverage, alternating in one run.

    swift build -c release
    CORRUPT_FUZZ_COVERAGE=1 swift build -c release --build-path /tmp/covbuild \
        --product friend-list-hardened        (and --product habit-loader-hardened)
    python3 Benchmarks/coverage-maze/cost.py --plain .build/release --instrumented /tmp/covbuild/release \
        [--seconds 20] [--rounds 2]

Each campaign: `corrupt-fuzz run --worker --jobs 1 --no-minimize --duration Ns` with the
loader's format and corpus. Prints inputs/s per configuration (mean of the rounds) and the
ratios to the plain build.
"""
import argparse, json, os, shutil, subprocess, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LOADERS = {
    "friend-list-hardened": ["--format", "friend-list", "--corpus", "Corpus/friend-lists"],
    "habit-loader-hardened": ["--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits"],
}


def rate(cf, loader, options, seconds, coverage):
    reports = tempfile.mkdtemp()
    command = [cf, "run", "--worker", "--target", f"{loader} @@", *options, "--duration", f"{seconds}s", "--jobs", "1",
               "--no-minimize", "--reports", reports] + ([] if coverage else ["--no-coverage"])
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds * 3 + 60)
    target = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
    shutil.rmtree(reports, ignore_errors=True)
    return target["executionsPerSecond"], (target.get("coverage") or {}).get("edges")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plain", required=True)
    parser.add_argument("--instrumented", required=True)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cf = os.path.join(os.path.abspath(args.plain), "corrupt-fuzz")
    print("| loader | plain build | instrumented, coverage read | instrumented, --no-coverage | edges |\n|---|---:|---:|---:|---:|")
    for name, options in LOADERS.items():
        configs = [(os.path.join(os.path.abspath(args.plain), name), True),
                   (os.path.join(os.path.abspath(args.instrumented), name), True),
                   (os.path.join(os.path.abspath(args.instrumented), name), False)]
        sums, edges = [0.0, 0.0, 0.0], None
        for _ in range(args.rounds):
            for index, (loader, coverage) in enumerate(configs):
                value, seen = rate(cf, loader, options, args.seconds, coverage)
                sums[index] += value / args.rounds
                edges = edges or seen
        plain = sums[0]
        print(f"| {name} | {plain:.0f}/s | {sums[1]:.0f}/s ({sums[1] / plain:.2f}x) | {sums[2]:.0f}/s ({sums[2] / plain:.2f}x) | {edges} |",
              flush=True)


if __name__ == "__main__":
    main()
