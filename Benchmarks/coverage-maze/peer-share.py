#!/usr/bin/env python3
"""The fuzzer's own share of a core on the cheapest target, beside AFL++'s, in one run.

Each of corrupt-fuzz's jobs and its worker take turns on one core (the job is bound to a free
CPU and its worker inherits it), as afl-fuzz and its fork server's child do (AFL++ binds each
instance to a free core the same way). The fuzzer's share of that core is then its cost per
input over the two costs together: the cheaper the loader, the larger the fuzzer's share,
whatever the fuzzer does. This puts a number on that beside the peer: the trivial C loader of
Benchmarks/crash-pace (a magic check and a byte sum, crash off) as a corrupt-fuzz worker
(`--schema habit-tracker.ksy`, as the habit loader is fuzzed; and with byte mutations and no
validator, the work AFL++ does per input), and the same loader in AFL++'s
persistent mode with shared-memory test cases (afl-crashy.c, built with afl-clang-fast), at 1
and 2 jobs (AFL++: -M and -S instances sharing one output folder). Also the two bundled
hardened loaders as workers, as parent-cpu.py runs them.

The floor: floor-driver.c runs the same worker with the protocol's own system calls and nothing
else (the input file written as a job writes it, the command, the answer read as a job reads
it; each input a seed with one bit flipped, neither validated nor judged), one process on one
CPU with its worker. Its share is what any job has with that worker before it does any work of
its own (rows "floor", at 1 job; at 2 jobs each pair has its core as at 1).

The share is measured in the steady state: each fuzzer thread's (corrupt-fuzz) or process's
(afl-fuzz) CPU time read from /proc every quarter second from 3 s after the start to 1 s
before the end, over the part of that time it ran (a job's thread ends with its fuzzing, before
the checks and the report): set-up and reports are left out. Linux; needs afl-fuzz and afl-clang-fast
(`apt-get install afl++`) for the peer's rows.

    swift build -c release
    python3 Benchmarks/coverage-maze/peer-share.py [--bin .build/release] [--seconds 12]
"""
import argparse, json, os, shutil, subprocess, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TCK = os.sysconf("SC_CLK_TCK")
HABITS = ["--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits"]


def cpu(path):
    """utime + stime of a /proc stat file, in seconds."""
    fields = open(path).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TCK


def threads(pid):
    """CPU seconds of each thread of `pid`."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            times[tid] = cpu(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            pass
    return times


def steady(read, seconds):
    """The per-thread (or per-process) shares of a core between 3 s and seconds - 1, each over
    the part of that window it was seen in: a job's thread ends when its fuzzing does, which is
    before the campaign's end once it has findings to check and report."""
    time.sleep(3)
    first, last = {}, {}
    end = time.monotonic() + seconds - 4
    while True:
        now, sample = time.monotonic(), read()
        for key, value in sample.items():
            first.setdefault(key, (now, value))
            last[key] = (now, value)
        if now >= end:
            break
        time.sleep(0.25)
    return sorted(((last[k][1] - first[k][1]) / (last[k][0] - first[k][0]) for k in last if last[k][0] - first[k][0] >= 2),
                  reverse=True)


# The environment corrupt-fuzz gave each target's worker (its crash reporter preloaded, the fork
# server and crash recovery asked for), for the floor's run of the same worker.
WORKER_ENV = {}


def worker_environment(pid):
    """The environment of the first worker process `pid` started, as /proc shows it."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        for child in open(f"/proc/{pid}/task/{tid}/children").read().split():
            try:
                pairs = open(f"/proc/{child}/environ", "rb").read().split(b"\0")
                return dict(pair.decode().split("=", 1) for pair in pairs if b"=" in pair)
            except OSError:
                pass
    return {}


def corrupt_fuzz(bin, target, opts, jobs, seconds, env):
    """(inputs/s, shares of its busiest threads) of one worker campaign."""
    reports = tempfile.mkdtemp()
    try:
        p = subprocess.Popen(
            [f"{bin}/corrupt-fuzz", "run", "--worker", "--target", f"{target} @@", *opts, "--duration", f"{seconds}s",
             "--jobs", str(jobs), "--no-minimize", "--reports", reports],
            cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def sample():
            if not WORKER_ENV.get(target):
                WORKER_ENV[target] = worker_environment(p.pid)
            return threads(p.pid)

        shares = steady(sample, seconds)
        p.wait()
        summary = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
        return summary["executions"] / summary["fuzzSeconds"], shares[:jobs]
    finally:
        shutil.rmtree(reports, ignore_errors=True)


def floor(driver, worker, seeds, seconds):
    """(inputs/s, [share]) of floor-driver.c against `worker`, with the environment corrupt-fuzz gave
    that worker in the row before."""
    out = subprocess.run([driver, str(seconds), seeds, worker], cwd=ROOT, env=WORKER_ENV[worker], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), [float(out[1])]


def afl(target, jobs, seconds, work):
    """(execs/s, shares of the afl-fuzz processes) of `jobs` AFL++ instances."""
    out = os.path.join(work, "afl-out")
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "CRASHY_CRASH": "0", "AFL_NO_UI": "1", "AFL_SKIP_CPUFREQ": "1",
           "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1"}
    procs = []
    for n in range(jobs):
        role = ["-M", "main"] if n == 0 else ["-S", f"s{n}"]
        procs.append(subprocess.Popen(["afl-fuzz", "-i", "Corpus/habits", "-o", out, *role, "-V", str(seconds), "--", target],
                                      cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.2)  # each binds the next free core

    def read():
        times = {}
        for p in procs:
            try:
                times[p.pid] = cpu(f"/proc/{p.pid}/stat")
            except OSError:
                pass
        return times

    shares = steady(read, seconds)
    rate = 0.0
    for p in procs:
        p.wait(timeout=seconds + 60)
    for name in os.listdir(out):
        stats = os.path.join(out, name, "fuzzer_stats")
        if os.path.exists(stats):
            fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in open(stats))}
            rate += int(fields["execs_done"]) / max(1, int(fields["run_time"]))
    return rate, shares


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--seconds", type=int, default=12)
    args = parser.parse_args()
    bin = os.path.abspath(args.bin)
    work = tempfile.mkdtemp()
    trivial = os.path.join(work, "trivial-worker")
    subprocess.run(["cc", "-O2", "-I", "Sources/CCorruptFuzzWorker/include", "Benchmarks/crash-pace/crashy-worker.c",
                    "Sources/CCorruptFuzzWorker/corrupt_fuzz_worker.c", "-o", trivial], cwd=ROOT, check=True)
    driver = os.path.join(work, "floor-driver")
    subprocess.run(["cc", "-O2", "Benchmarks/coverage-maze/floor-driver.c", "-o", driver], cwd=ROOT, check=True)
    peer = shutil.which("afl-fuzz") and shutil.which("afl-clang-fast")
    afl_target = os.path.join(work, "afl-trivial")
    if peer:
        subprocess.run(["afl-clang-fast", "-O2", "Benchmarks/crash-pace/afl-crashy.c", "-o", afl_target], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("| fuzzer | loader | jobs | inputs/s | the fuzzer's busiest threads (processes), share of a core |")
    print("|---|---|---|---:|---|")
    for jobs in (1, 2):
        rows = [
            ("corrupt-fuzz", "trivial C worker", lambda: corrupt_fuzz(bin, trivial, HABITS, jobs, args.seconds, {"CRASHY_CRASH": "0"})),
            # No format and no validator: byte mutations, crashes and hangs only, as AFL++ runs.
            ("corrupt-fuzz, byte mutations, no validator", "trivial C worker",
             lambda: corrupt_fuzz(bin, trivial, ["--corpus", "Corpus/habits"], jobs, args.seconds, {"CRASHY_CRASH": "0"})),
        ]
        if jobs == 1:
            rows.append(("floor (the protocol's system calls alone)", "trivial C worker",
                         lambda: floor(driver, trivial, "Corpus/habits", args.seconds)))
        if peer:
            rows.append(("AFL++ persistent, shared-memory test cases", "trivial C loader", lambda: afl(afl_target, jobs, args.seconds, work)))
        rows += [
            ("corrupt-fuzz", "habit-loader-hardened", lambda: corrupt_fuzz(bin, f"{bin}/habit-loader-hardened", HABITS, jobs, args.seconds, {})),
        ]
        if jobs == 1:
            rows.append(("floor (the protocol's system calls alone)", "habit-loader-hardened",
                         lambda: floor(driver, f"{bin}/habit-loader-hardened", "Corpus/habits", args.seconds)))
        rows += [
            ("corrupt-fuzz", "friend-list-hardened",
             lambda: corrupt_fuzz(bin, f"{bin}/friend-list-hardened", ["--format", "friend-list", "--corpus", "Corpus/friend-lists"], jobs,
                                  args.seconds, {})),
        ]
        for fuzzer, loader, measure in rows:
            rate, shares = measure()
            print(f"| {fuzzer} | {loader} | {jobs} | {rate:,.0f}/s | {', '.join(f'{s:.2f}' for s in shares)} |", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
