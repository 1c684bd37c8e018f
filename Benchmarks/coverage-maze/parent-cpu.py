#!/usr/bin/env python3
"""corrupt-fuzz's own CPU time (its children left out) per million inputs, at --jobs 1 and 2:
the bundled hardened loaders as workers, 15 s each. Run from anywhere after
`swift build -c release`; reads /proc (Linux).

    python3 Benchmarks/coverage-maze/parent-cpu.py
"""
import subprocess, time, json, os, sys, tempfile, shutil
ROOT=os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")); BIN=os.path.join(ROOT, ".build", "release")
tck=os.sysconf("SC_CLK_TCK")
def run(loader, opts, jobs, secs=15):
    rep=tempfile.mkdtemp()
    p=subprocess.Popen([f"{BIN}/corrupt-fuzz","run","--worker","--target",f"{BIN}/{loader} @@",*opts,"--duration",f"{secs}s","--jobs",str(jobs),"--no-minimize","--reports",rep],cwd=ROOT,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
    last=0
    while p.poll() is None:
        try:
            f=open(f"/proc/{p.pid}/stat").read().rsplit(")",1)[1].split()
            last=(int(f[11])+int(f[12]))/tck
        except Exception: pass
        time.sleep(0.1)
    t=json.load(open(os.path.join(rep,"latest","summary.json")))["targets"][0]
    shutil.rmtree(rep,ignore_errors=True)
    return last, t["executions"], t["fuzzSeconds"]
for loader,opts in [("friend-list-hardened",["--format","friend-list","--corpus","Corpus/friend-lists"]),("habit-loader-hardened",["--schema","Corpus/schemas/habit-tracker.ksy","--corpus","Corpus/habits"])]:
    for jobs in (1,2):
        cpu,ex,fs=run(loader,opts,jobs)
        print(f"| {loader} | --jobs {jobs} | {ex/fs:,.0f}/s | {cpu:.2f} s in {fs:.1f} s ({cpu/fs:.2f} of a core) | {cpu/ex*1e6:.1f} s |",flush=True)
