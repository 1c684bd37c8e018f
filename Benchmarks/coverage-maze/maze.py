#!/usr/bin/env python3
"""Seconds to the maze's crash (a bug behind four independent 4-byte comparisons,
Examples/maze-c and Examples/MazeLoader), side by side in one run: corrupt-fuzz with coverage,
without it, and AFL++ on the C build.

    python3 Benchmarks/coverage-maze/maze.py --bin DIR [--seeds 1 2 3 4 5] [--cap 60]
        [--blind-cap 600] [--blind-seeds 1] [--afl-cap 300] [--only NAME ...]

DIR is a release build's products folder (`swift build -c release --show-bin-path`): its
`corrupt-fuzz` and `maze-worker` (the Swift maze, built with -sanitize=fuzzer by Package.swift).
The C maze is built here: with clang's SanitizerCoverage (trace-pc-guard,trace-cmp) linked with
corrupt_fuzz_coverage.c, and with AFL++'s afl-clang-fast (laf-intel: AFL_LLVM_LAF_ALL=1, which
splits the comparisons into bytes AFL++'s edges can see) and with CmpLog (AFL_LLVM_CMPLOG=1,
the same build as the target and as `-c`). One seed file: 32 bytes none of whose words is right. Every run has one core
(--jobs 1; AFL++ is one process). A run that does not find the crash within its cap prints
`> cap`. Prints a table of the median over the seeds, and every run.
"""
import argparse, glob, json, os, shutil, statistics, subprocess, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNTIME = os.path.join(ROOT, "Sources", "CCorruptFuzzWorker")
MAZE_C = os.path.join(ROOT, "Examples", "maze-c", "maze.c")


def build(work):
    include = "-I" + os.path.join(RUNTIME, "include")
    worker, coverage = os.path.join(RUNTIME, "corrupt_fuzz_worker.c"), os.path.join(RUNTIME, "corrupt_fuzz_coverage.c")
    clang = shutil.which("clang") or "/opt/swift/usr/bin/clang"
    out = {}
    obj = os.path.join(work, "maze.o")
    subprocess.run([clang, "-O1", "-c", "-fsanitize-coverage=trace-pc-guard,trace-cmp", include, MAZE_C, "-o", obj], check=True)
    out["c-sancov"] = os.path.join(work, "maze-sancov")
    subprocess.run([clang, "-O1", include, obj, worker, coverage, "-o", out["c-sancov"]], check=True)
    if shutil.which("afl-clang-fast"):
        env = dict(os.environ, AFL_LLVM_LAF_ALL="1", AFL_QUIET="1")
        out["c-afl-laf"] = os.path.join(work, "maze-afl-laf")
        subprocess.run(["afl-clang-fast", "-O1", include, MAZE_C, worker, "-o", out["c-afl-laf"]], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env = dict(os.environ, AFL_QUIET="1")
        out["c-afl"] = os.path.join(work, "maze-afl")
        subprocess.run(["afl-clang-fast", "-O1", include, MAZE_C, worker, "-o", out["c-afl"]], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out["c-afl-cmplog"] = os.path.join(work, "maze-afl-cmplog")
        subprocess.run(["afl-clang-fast", "-O1", include, MAZE_C, worker, "-o", out["c-afl-cmplog"]], check=True,
                       env=dict(env, AFL_LLVM_CMPLOG="1"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def corrupt_fuzz(binary, target, seeds, seed, cap, worker, coverage, work):
    reports = tempfile.mkdtemp(dir=work)
    command = [binary, "run", "--target", f"{target} @@", "--corpus", seeds, "--duration", f"{cap}s", "--seed", str(seed),
               "--jobs", "1", "--no-minimize", "--reports", reports]
    if worker:
        command.append("--worker")
    if not coverage:
        command.append("--no-coverage")
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=cap * 2 + 120,
                   env=dict(os.environ, SWIFT_BACKTRACE="enable=no"))
    target_summary = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
    crashes = [f["firstSeconds"] for f in target_summary["findings"] if f["kind"] == "crash"]
    shutil.rmtree(reports, ignore_errors=True)
    return (min(crashes) if crashes else None), target_summary["executions"], target_summary.get("coverage")


def afl(binary, seeds, seed, cap, work, cmplog=None):
    out = tempfile.mkdtemp(dir=work)
    env = dict(os.environ, AFL_SKIP_CPUFREQ="1", AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1", AFL_NO_UI="1",
               AFL_BENCH_UNTIL_CRASH="1", AFL_NO_AFFINITY="1")
    command = ["afl-fuzz", "-i", seeds, "-o", out, "-s", str(seed), "-V", str(cap)]
    if cmplog:
        command += ["-c", cmplog]
    command += ["--", binary, "@@"]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=cap + 120)
    crashes = [c for c in glob.glob(os.path.join(out, "default", "crashes", "id:*"))]
    stats = {key.strip(): value for key, value in (line.split(":", 1) for line in open(os.path.join(out, "default", "fuzzer_stats")) if ":" in line)}
    execs = int(stats["execs_done"].strip())
    seconds = None
    if crashes:
        # The crash file's name carries the milliseconds since the start.
        seconds = min(int(os.path.basename(c).split("time:")[1].split(",")[0]) for c in crashes) / 1000
    shutil.rmtree(out, ignore_errors=True)
    return seconds, execs, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--cap", type=int, default=60)
    parser.add_argument("--blind-cap", type=int, default=600)
    parser.add_argument("--blind-seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--afl-cap", type=int, default=300)
    parser.add_argument("--only", nargs="*", help="run only the rows whose name contains one of these")
    parser.add_argument("--skip", nargs="*", help="leave out the rows whose name contains one of these")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="maze-bench-")
    seeds = os.path.join(work, "seeds")
    os.makedirs(seeds)
    open(os.path.join(seeds, "seed.bin"), "wb").write(bytes((i * 97 + 13) & 255 for i in range(32)))
    targets = build(work)
    cf = os.path.join(os.path.abspath(args.bin), "corrupt-fuzz")
    swift_maze = os.path.join(os.path.abspath(args.bin), "maze-worker")
    plan = [
        ("corrupt-fuzz, Swift worker, coverage", lambda s: corrupt_fuzz(cf, swift_maze, seeds, s, args.cap, True, True, work), args.seeds),
        ("corrupt-fuzz, C worker (SanitizerCoverage), coverage", lambda s: corrupt_fuzz(cf, targets["c-sancov"], seeds, s, args.cap, True, True, work), args.seeds),
        ("corrupt-fuzz, C one process per input, coverage", lambda s: corrupt_fuzz(cf, targets["c-sancov"], seeds, s, args.cap, False, True, work), args.seeds),
    ]
    if "c-afl" in targets:
        plan += [
            ("corrupt-fuzz, C worker (afl-clang-fast, laf-intel), coverage", lambda s: corrupt_fuzz(cf, targets["c-afl-laf"], seeds, s, args.afl_cap, True, True, work), args.seeds),
            ("AFL++ (afl-clang-fast, laf-intel)", lambda s: afl(targets["c-afl-laf"], seeds, s, args.afl_cap, work), args.seeds),
            # The CmpLog build as the target too: with the plain build as the target and the CmpLog
            # build as -c, Debian's AFL++ 4.04c never ran its input-to-state stage here (0/5 in
            # 120 s; a one-comparison program not solved in 30 s), with it as both it does.
            ("AFL++ (afl-clang-fast, CmpLog -c)", lambda s: afl(targets["c-afl-cmplog"], seeds, s, args.afl_cap, work, targets["c-afl-cmplog"]), args.seeds),
        ]
    plan += [
        ("corrupt-fuzz, Swift worker, --no-coverage", lambda s: corrupt_fuzz(cf, swift_maze, seeds, s, args.blind_cap, True, False, work), args.blind_seeds),
        ("corrupt-fuzz, C worker, --no-coverage", lambda s: corrupt_fuzz(cf, targets["c-sancov"], seeds, s, args.blind_cap, True, False, work), args.blind_seeds),
    ]
    rows = []
    for name, run, seed_list in plan:
        if args.only and not any(o in name for o in args.only):
            continue
        if args.skip and any(o in name for o in args.skip):
            continue
        results = []
        for seed in seed_list:
            seconds, execs, coverage = run(seed)
            results.append(seconds)
            print(f"{name} | seed {seed}: {'%.2f s' % seconds if seconds is not None else 'not found'} ({execs} executions"
                  + (f", {coverage['edges']} edges" if coverage else "") + ")", flush=True)
        found = [r for r in results if r is not None]
        median = statistics.median(found) if len(found) * 2 > len(results) else None
        rows.append((name, median, len(found), len(results)))
    print("\n| | median seconds to the crash | seeds that found it |\n|---|---:|---:|")
    for name, median, found, total in rows:
        print(f"| {name} | {'%.2f' % median if median is not None else 'not found'} | {found}/{total} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
