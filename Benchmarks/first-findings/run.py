#!/usr/bin/env python3
"""Seconds to the first finding of each kind, for each bundled naive loader: two builds of
corrupt-fuzz side by side, same loaders, same seeds, same machine, same run.

    python3 Benchmarks/first-findings/run.py --before DIR [--after DIR] [--loaders DIR]
        [--seconds 30] [--seeds 0 1 2] [--jobs 2] [--no-build] [--json FILE] [--reports DIR]

--before and --after are folders holding a `corrupt-fuzz` binary (and, for --loaders, the
loader executables). --after defaults to the package's release bin folder (`swift build -c
release --show-bin-path`), built first unless --no-build. --loaders (default: the --after
folder) supplies habit-loader-naive, friend-list-naive and notes-loader-naive to BOTH sides,
so only the fuzzer differs. For each loader and seed the two builds run one after the other
(which one goes first alternates), so machine load falls on both alike.

Each campaign is `corrupt-fuzz run --target 'LOADER @@' <format args> --corpus <corpus>
--duration Ns --seed S --timeout 500ms --no-minimize --reports <folder> --jobs J`; the script
reads `<folder>/latest/summary.json` (each finding's `kind` and `firstSeconds`, the target's
`executions`). Exit 0 (no finding) and 1 (findings) are normal; exit 2, any other exit, a death
by a signal (e.g. SIGILL) or no exit within max(3 x seconds, seconds + 120) is recorded as the
campaign's status and counted out of that side's medians and found-by counts.

Prints, per loader, a Markdown table: per finding kind, the median seconds to its first finding
over the seeds that found it, the ratio before / after (above 1: the after build is faster), and
how many seeds found it on each side; then per seed each campaign's status, executions and
distinct findings.
"""
import argparse, json, os, shlex, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The bundled naive loaders (see Sources/corrupt-fuzz/Demo.swift): executable, corpus, format.
LOADERS = [
    ("habit-loader-naive", "Corpus/habits", ["--schema", os.path.join(ROOT, "Corpus/schemas/habit-tracker.ksy")]),
    ("friend-list-naive", "Corpus/friend-lists", ["--format", "friend-list"]),
    ("notes-loader-naive", "Corpus/notes", ["--format", "notes"]),
]

# Row order of the tables (FindingKind's order); kinds not listed here follow alphabetically.
KINDS = ["crash", "hang", "oom", "silent-acceptance", "false-rejection", "wrong-reason", "xxe", "validator-error"]

SIDES = ("before", "after")


def run_campaign(fuzzer, loader, corpus, format_args, seed, options, reports):
    """Runs one campaign; returns its record (status, executions, findings, first seconds per kind)."""
    os.makedirs(reports, exist_ok=True)
    args = [fuzzer, "run", "--target", f"{shlex.quote(loader)} @@", *format_args,
            "--corpus", os.path.join(ROOT, corpus), "--duration", f"{options.seconds}s", "--seed", str(seed),
            "--timeout", "500ms", "--no-minimize", "--reports", reports, "--jobs", str(options.jobs)]
    record = {"seed": seed, "command": shlex.join(args), "status": None, "returncode": None,
              "wallSeconds": None, "executions": None, "distinctFindings": None, "firstSeconds": {}, "findings": []}
    log_path = os.path.join(reports, "corrupt-fuzz.log")
    start = time.monotonic()
    with open(log_path, "wb") as log:
        # Own session, so that on a time-out the fuzzer and the loaders it started die together.
        process = subprocess.Popen(args, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)
        try:
            process.wait(timeout=max(3 * options.seconds, options.seconds + 120))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            record["status"] = "timed out"
    record["wallSeconds"] = round(time.monotonic() - start, 3)
    record["returncode"] = code = process.returncode
    if record["status"] is None:
        if code < 0:
            try:
                record["status"] = f"crashed ({signal.Signals(-code).name})"
            except ValueError:
                record["status"] = f"crashed (signal {-code})"
        elif code not in (0, 1):
            record["status"] = f"error (exit {code})"
    summary_path = os.path.join(reports, "latest", "summary.json")
    if record["status"] is None:
        if not os.path.exists(summary_path):
            record["status"] = "no summary.json"
        else:
            with open(summary_path) as f:
                target = json.load(f)["targets"][0]
            record["status"] = "ok"
            record["executions"] = target["executions"]
            record["distinctFindings"] = len(target["findings"])
            record["findings"] = [{key: finding.get(key) for key in ("kind", "signature", "firstSeconds", "firstExecution", "hits")}
                                  for finding in target["findings"]]
            for finding in target["findings"]:
                kind, seconds = finding["kind"], finding["firstSeconds"]
                record["firstSeconds"][kind] = min(seconds, record["firstSeconds"].get(kind, seconds))
    if record["status"] != "ok":
        with open(log_path, errors="replace") as f:
            log_text = f.read()
        # A crash's cause is near the top, before the backtrace; a usage error's at the end.
        record["log"] = log_text if len(log_text) <= 3000 else log_text[:2000] + "\n…\n" + log_text[-1000:]
        record["cause"] = failure_cause(log_text)
    return record


def failure_cause(log_text):
    """The line of a failed campaign's output that best says why: a fatal error, else an error, else the last line."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    for marker in ("Fatal error", "error:", "Error"):
        for line in lines:
            if marker in line:
                return line[:300]
    return lines[-1][:300] if lines else ""


def summarize(records):
    """Per kind and side: median first seconds over the completed campaigns that found it, and counts."""
    completed = {side: [r for r in records[side] if r["status"] == "ok"] for side in SIDES}
    found_kinds = {kind for side in SIDES for r in completed[side] for kind in r["firstSeconds"]}
    kinds = [k for k in KINDS if k in found_kinds] + sorted(found_kinds - set(KINDS))
    rows = []
    for kind in kinds:
        row = {"kind": kind}
        for side in SIDES:
            values = [r["firstSeconds"][kind] for r in completed[side] if kind in r["firstSeconds"]]
            row[side] = {"median": statistics.median(values) if values else None,
                         "found": len(values), "completed": len(completed[side])}
        rows.append(row)
    campaigns = {side: {
        "executionsMedian": statistics.median([r["executions"] for r in completed[side]]) if completed[side] else None,
        "distinctFindingsMedian": statistics.median([r["distinctFindings"] for r in completed[side]]) if completed[side] else None,
        "completed": len(completed[side]), "total": len(records[side]),
    } for side in SIDES}
    return {"kinds": rows, "campaigns": campaigns}


def ratio(before, after):
    if before is None or after is None:
        return "before only" if after is None and before is not None else ("after only" if after is not None else "")
    if after == 0:
        return "1.00x" if before == 0 else "inf"
    return f"{before / after:.2f}x"


def seconds(value):
    return "-" if value is None else f"{value:.3f}"


def campaign_cell(record):
    if record["status"] != "ok":
        return f"**{record['status']}**"
    return f"{record['executions']} executions, {record['distinctFindings']} findings"


def print_table(name, records, summary, options):
    print(f"## {name}\n")
    print(f"{len(options.seeds)} seed(s) x {options.seconds}s, --jobs {options.jobs}; seconds to the first finding of "
          "each kind, median over the seeds that found it; ratio = before / after (above 1: after is faster).\n")
    print("| kind | before median s | after median s | ratio | found before | found after |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in summary["kinds"]:
        b, a = row["before"], row["after"]
        # "before only" / "after only" need the other side to have run; with no completed campaign there is no ratio.
        r = ratio(b["median"], a["median"]) if b["completed"] and a["completed"] else ""
        print(f"| {row['kind']} | {seconds(b['median'])} | {seconds(a['median'])} | {r} "
              f"| {b['found']}/{b['completed']} | {a['found']}/{a['completed']} |")
    if not summary["kinds"]:
        completed = sum(summary["campaigns"][side]["completed"] for side in SIDES)
        print(f"| {'(no finding)' if completed else '(no completed campaign)'} | - | - | | | |")
    c = summary["campaigns"]
    fmt = lambda v: "-" if v is None else (f"{v:.0f}" if v == int(v) else f"{v:.1f}")
    print(f"| *executions / campaign (median; ratio after / before)* | {fmt(c['before']['executionsMedian'])} | {fmt(c['after']['executionsMedian'])} "
          f"| {ratio(c['after']['executionsMedian'], c['before']['executionsMedian']) if c['before']['executionsMedian'] else ''} | | |")
    print(f"| *distinct findings (median)* | {fmt(c['before']['distinctFindingsMedian'])} | {fmt(c['after']['distinctFindingsMedian'])} | | | |")
    print("\n| seed | before | after |")
    print("|---:|---|---|")
    for b, a in zip(records["before"], records["after"]):
        print(f"| {b['seed']} | {campaign_cell(b)} | {campaign_cell(a)} |")
    failures = [(side, r) for side in SIDES for r in records[side] if r["status"] != "ok"]
    if failures:
        print("\nCampaigns that did not complete (left out of the medians and found-by counts; their output is in --json):\n")
        for side, r in failures:
            print(f"- {side}, seed {r['seed']}: {r['status']}" + (f": `{r['cause']}`" if r.get("cause") else ""))
    print()


def release_bin_path(build):
    if build:
        subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="folder of the old build's corrupt-fuzz")
    parser.add_argument("--after", help="folder of the new build's corrupt-fuzz (default: the package's release bin folder)")
    parser.add_argument("--loaders", help="folder of the loader executables, used by both sides (default: --after)")
    parser.add_argument("--seconds", type=int, default=30, help="duration of each campaign (default 30)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="campaign seeds (default 0 1 2)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel executions per campaign (default 2)")
    parser.add_argument("--no-build", action="store_true", help="do not run swift build -c release for the default --after")
    parser.add_argument("--json", metavar="FILE", help="also write the raw results as JSON")
    parser.add_argument("--reports", metavar="DIR", help="keep each campaign's report folder under DIR (default: a temporary folder, deleted)")
    options = parser.parse_args()

    after = options.after or release_bin_path(build=not options.no_build)
    dirs = {"before": os.path.abspath(options.before), "after": os.path.abspath(after)}
    loaders_dir = os.path.abspath(options.loaders or after)
    fuzzers = {side: os.path.join(dirs[side], "corrupt-fuzz") for side in SIDES}
    needed = list(fuzzers.values()) + [os.path.join(loaders_dir, name) for name, _, _ in LOADERS]
    missing = [path for path in needed if not (os.path.isfile(path) and os.access(path, os.X_OK))]
    if missing:
        parser.error("missing executable(s): " + ", ".join(missing))

    results = {"options": {"seconds": options.seconds, "seeds": options.seeds, "jobs": options.jobs},
               "before": dirs["before"], "after": dirs["after"], "loaders": loaders_dir, "targets": {}}
    work = options.reports or tempfile.mkdtemp(prefix="first-findings-")
    try:
        turn = 0
        for name, corpus, format_args in LOADERS:
            records = {side: [] for side in SIDES}
            for seed in options.seeds:
                order = SIDES if turn % 2 == 0 else SIDES[::-1]
                turn += 1
                for side in order:
                    reports = os.path.join(work, f"{name}-seed{seed}-{side}")
                    record = run_campaign(fuzzers[side], os.path.join(loaders_dir, name), corpus, format_args,
                                          seed, options, reports)
                    records[side].append(record)
                    detail = (f"{record['executions']} executions, {record['distinctFindings']} findings"
                              if record["status"] == "ok" else f"{record['status']}: {record.get('cause', '')}")
                    print(f"[{name} seed {seed} {side}] {detail} ({record['wallSeconds']:.1f}s)", file=sys.stderr)
            summary = summarize(records)
            results["targets"][name] = {"campaigns": records, "summary": summary}
            print_table(name, records, summary, options)
            sys.stdout.flush()
    finally:
        if not options.reports:
            shutil.rmtree(work, ignore_errors=True)
    if options.json:
        with open(options.json, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
