#!/usr/bin/env python3
"""A frequent, shallow crash: inputs/s of a persistent worker that crashes on one input in three,
against the same worker with the crash turned off, for each corrupt-fuzz build given, side by
side in one run (rounds alternate builds and modes, so a machine that slows down slows all).

Workers: the hardened habit loader (Swift, `WorkerFixture habits`: an index out of range on one
input in three, a trap), each build's own (its fork server is the build's), and a trivial C worker
(crashy-worker.c: abort(); __builtin_trap() built with -DCRASH_BY_TRAP; a write to address 8
with -DCRASH_BY_FAULT) built from this checkout (with an older corrupt-fuzz, its fork
server is this checkout's, but the crash reporter, which tells the server that a child is
dying, is the older build's). With afl-clang-fast installed, the peer: the C
loader in AFL++'s persistent mode with its fork server (afl-crashy.c), the same seconds, in the
same rounds.

    swift build -c release --product corrupt-fuzz && swift build -c release --product WorkerFixture
    python3 Benchmarks/crash-pace/run.py --bin OLD_BUILD_DIR --bin .build/release [--seconds 10 --rounds 3]
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def campaign(corrupt_fuzz, target, env, schema_args, seconds):
    reports = tempfile.mkdtemp()
    try:
        subprocess.run(
            [corrupt_fuzz, "run", "--worker", "--target", target + " @@", *schema_args, "--duration", f"{seconds}s",
             "--jobs", "1", "--no-minimize", "--reports", reports],
            cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        target = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
        crashes = [f for f in target["findings"] if f["kind"] == "crash"]
        return target["executions"] / target["fuzzSeconds"], [(f["signature"], f["hits"]) for f in crashes]
    finally:
        shutil.rmtree(reports, ignore_errors=True)


def afl_rate(target, crash, seconds, work):
    """AFL++'s executions per second on `target` for `seconds` (its fuzzer_stats)."""
    out = os.path.join(work, "afl-out")
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "CRASHY_CRASH": crash, "AFL_NO_UI": "1", "AFL_SKIP_CPUFREQ": "1",
           "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1", "AFL_NO_AFFINITY": "1"}
    subprocess.run(["afl-fuzz", "-i", "Corpus/habits", "-o", out, "-V", str(seconds), "--", target], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds + 60, check=False)
    stats = {key.strip(): value.strip() for key, value in (line.split(":", 1) for line in open(os.path.join(out, "default", "fuzzer_stats")))}
    return int(stats["execs_done"]) / max(1, int(stats["run_time"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append", required=True, help="a folder holding a corrupt-fuzz build")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    c_worker = os.path.join(work, "crashy-worker")
    c_trapper = os.path.join(work, "trapping-worker")
    c_faulter = os.path.join(work, "faulting-worker")
    for output, flags in ((c_worker, []), (c_trapper, ["-DCRASH_BY_TRAP"]), (c_faulter, ["-DCRASH_BY_FAULT"])):
        subprocess.run(["cc", "-O2", *flags, "-I", "Sources/CCorruptFuzzWorker/include", "Benchmarks/crash-pace/crashy-worker.c",
                        "Sources/CCorruptFuzzWorker/corrupt_fuzz_worker.c", "-o", output], cwd=ROOT, check=True)
    habits = ["--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits"]
    # A trap (ud2: Swift's failed checks, C's __builtin_trap) is lived through by a fork server's
    # child unless CORRUPT_FUZZ_RECOVER_CRASHES=0 (builds before 2026-11-27 never do; builds of
    # 2026-11-27 named it CORRUPT_FUZZ_RECOVER_TRAPS); an abort or a memory fault too, since
    # 2026-11-28.
    never = {"CORRUPT_FUZZ_RECOVER_CRASHES": "0", "CORRUPT_FUZZ_RECOVER_TRAPS": "0"}
    workers = [
        ("Swift: hardened habit loader (a trap)", None, "WORKER_FIXTURE_CRASH", {"WORKER_FIXTURE_MODE": "habits"}),
        ("Swift: the same, CORRUPT_FUZZ_RECOVER_CRASHES=0", None, "WORKER_FIXTURE_CRASH", {"WORKER_FIXTURE_MODE": "habits", **never}),
        ("C: trivial worker (abort)", c_worker, "CRASHY_CRASH", {}),
        ("C abort: the same, CORRUPT_FUZZ_RECOVER_CRASHES=0", c_worker, "CRASHY_CRASH", never),
        ("C: trivial worker (a memory fault)", c_faulter, "CRASHY_CRASH", {}),
        ("C: trivial worker (a trap)", c_trapper, "CRASHY_CRASH", {}),
        ("C trap: the same, CORRUPT_FUZZ_RECOVER_CRASHES=0", c_trapper, "CRASHY_CRASH", never),
    ]
    afl = shutil.which("afl-clang-fast") and shutil.which("afl-fuzz")
    afl_target = os.path.join(work, "afl-crashy")
    if afl:
        subprocess.run(["afl-clang-fast", "-O2", "Benchmarks/crash-pace/afl-crashy.c", "-o", afl_target], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rates = {}
    for _ in range(args.rounds):
        if afl:
            for crash in ("0", "1"):
                rates.setdefault(("C: trivial loader", "AFL++ persistent mode", crash), []).append(
                    afl_rate(afl_target, crash, args.seconds, work))
        for name, path, switch, env in workers:
            for build in args.bin:
                for crash in ("0", "1"):
                    target = path or os.path.join(build, "WorkerFixture")
                    rate, found = campaign(os.path.join(build, "corrupt-fuzz"), target, {**env, switch: crash}, habits, args.seconds)
                    rates.setdefault((name, build, crash), []).append(rate)
                    if crash == "1":
                        rates.setdefault((name, build, "found"), []).append(found)
    print("| worker | corrupt-fuzz | crash-free | one in three crashes | ratio | crash findings (hits) |")
    print("|---|---|---:|---:|---:|---|")
    if afl:
        free = statistics.median(rates[("C: trivial loader", "AFL++ persistent mode", "0")])
        crashing = statistics.median(rates[("C: trivial loader", "AFL++ persistent mode", "1")])
        print(f"| C: trivial loader | AFL++ persistent mode | {free:,.0f}/s | {crashing:,.0f}/s | {crashing / free:.3f} | |", flush=True)
    for name, _, _, _ in workers:
        for build in args.bin:
            free = statistics.median(rates[(name, build, "0")])
            crashing = statistics.median(rates[(name, build, "1")])
            found = rates[(name, build, "found")][-1]
            print(f"| {name} | {build} | {free:,.0f}/s | {crashing:,.0f}/s | {crashing / free:.3f} | "
                  + "; ".join(f"{s} ({h})" for s, h in found) + " |", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
