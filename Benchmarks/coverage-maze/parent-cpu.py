#!/usr/bin/env python3
"""corrupt-fuzz's own CPU time (its children left out) per million inputs, at --jobs 1 and 2:
the bundled hardened loaders as workers, 15 s each, split by thread (one thread making and
judging every input was the bound of --jobs N, #32): each job's thread (named `cf-job N`: its
own inputs, validation and judging, sharing a core with its worker) and the rest, the shared
part (the calling thread's progress, stop and clean-up, every 100 ms), as a share of a core
and per job. Run from anywhere after `swift build -c release`; reads /proc (Linux). For a
build whose job threads have no names (before 2026-11-29), its busiest threads count as the jobs.

    python3 Benchmarks/coverage-maze/parent-cpu.py
    python3 Benchmarks/coverage-maze/parent-cpu.py --bin /tmp/before --bin .build/release --seconds 10

With several --bin folders (each a release build's corrupt-fuzz and loaders), every
configuration runs once per folder, one after the other, so that the builds share the
machine's moods. The corpus and schemas are this checkout's.
"""
import argparse, json, os, shutil, subprocess, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TCK = os.sysconf("SC_CLK_TCK")
LOADERS = [
    ("friend-list-hardened", ["--format", "friend-list", "--corpus", "Corpus/friend-lists"]),
    ("habit-loader-hardened", ["--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits"]),
]


def cpu(path):
    """utime + stime of a /proc stat file, in seconds."""
    fields = open(path).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TCK


def run(bin, loader, opts, jobs, secs):
    """(process CPU, [each job thread's CPU], CPU of the other threads, executions, fuzz seconds)
    of one campaign."""
    rep = tempfile.mkdtemp()
    p = subprocess.Popen(
        [f"{bin}/corrupt-fuzz", "run", "--worker", "--target", f"{bin}/{loader} @@", *opts, "--duration", f"{secs}s",
         "--jobs", str(jobs), "--no-minimize", "--reports", rep],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total, threads, names = 0, {}, {}
    while p.poll() is None:
        try:
            total = cpu(f"/proc/{p.pid}/stat")
            for tid in os.listdir(f"/proc/{p.pid}/task"):
                threads[tid] = cpu(f"/proc/{p.pid}/task/{tid}/stat")
                names[tid] = open(f"/proc/{p.pid}/task/{tid}/comm").read().strip()
        except Exception:
            pass
        time.sleep(0.1)
    t = json.load(open(os.path.join(rep, "latest", "summary.json")))["targets"][0]
    shutil.rmtree(rep, ignore_errors=True)
    job_threads = [tid for tid in threads if names.get(tid, "").startswith("cf-job")]
    if not job_threads:  # an older build: its busiest threads
        job_threads = sorted(threads, key=threads.get, reverse=True)[:jobs]
    jobs_cpu = sorted((threads[tid] for tid in job_threads), reverse=True)
    return total, jobs_cpu, sum(threads.values()) - sum(jobs_cpu), t["executions"], t["fuzzSeconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", action="append", help="a folder with corrupt-fuzz and the loaders (default: this checkout's .build/release); repeatable")
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    bins = [os.path.abspath(b) for b in args.bin or [os.path.join(ROOT, ".build", "release")]]
    print("| build | loader | jobs | inputs/s | corrupt-fuzz's CPU | per million inputs | each job's thread | the rest, per job |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for loader, opts in LOADERS:
        for jobs in args.jobs:
            for bin in bins:
                total, jobs_cpu, rest, ex, fs = run(bin, loader, opts, jobs, args.seconds)
                print(f"| {os.path.basename(os.path.normpath(bin))} | {loader} | {jobs} | {ex / fs:,.0f}/s | {total / fs:.2f} of a core "
                      f"| {total / ex * 1e6:.1f} s | {', '.join(f'{c / fs:.2f}' for c in jobs_cpu)} of a core "
                      f"| {rest / fs / jobs:.3f} of a core |", flush=True)


if __name__ == "__main__":
    main()
