#!/usr/bin/env python3
"""corrupt-fuzz beside AFL++ on three outside programs, one after the other in one run: seconds
to the first input, peak resident memory of the fuzzer itself, inputs per second, and seconds to
the first finding.

    python3 Benchmarks/real-targets/run.py --corrupt-fuzz LABEL=PATH [--corrupt-fuzz LABEL=PATH ...]
        [--seconds 60] [--yaml-worker PATH] [--only xml plist yaml] [--no-afl]

Each --corrupt-fuzz is a corrupt-fuzz binary measured under its label (e.g.
`before=/tmp/before/corrupt-fuzz after=.build/release/corrupt-fuzz`). The targets:

- xml: `xmllint --noout @@` (Debian's libxml2-utils) on Benchmarks/pace/xml-seeds (20 of
  libxml2's own test documents), corrupt-fuzz with `--format xml`;
- plist: `python3 -c 'import plistlib,sys; plistlib.load(open(sys.argv[1],"rb"))' @@` on
  Corpus/plists (15 property lists of other projects' test suites), `--format binary-plist`;
- yaml: Yams (YAML, libyaml underneath) loading a file in Benchmarks/real-targets/yaml-worker,
  a package of its own (built here with `swift build -c release` unless --yaml-worker is
  given), on Benchmarks/real-targets/yaml-seeds; corrupt-fuzz runs it as a persistent worker
  (`--worker`, no format: byte mutations), AFL++ one process per input (the same executable
  loads the file named by its argument when not started as a worker).

Every fuzzer has the target to itself for --seconds, one after the other (AFL++ wants a core of
its own; the machine has two): corrupt-fuzz with `--jobs 1 --no-minimize`, AFL++ 4.04c's
`afl-fuzz -n` (no instrumentation: a fork and exec per input) with `-t 1000` (corrupt-fuzz's
default timeout), and for xml also AFL++ on a small C harness built with afl-clang-fast that
reads the file with `xmlReadFile` as xmllint does: only the harness is instrumented (libxml2 is
the system's), so AFL++ gets its fork server's speed and next to no coverage.

Measured:
- first input: seconds from the fuzzer's start to its first start of the target, in a
  separate short run where the target is wrapped by a tiny C program that notes the time (not
  in the measured run: it would cost an exec per input). For a worker, its first start.
- peak memory: VmHWM of the fuzzer's own process (polled from /proc; for AFL++ the afl-fuzz
  process, not its fork server or the target).
- inputs/s: executions over the run's seconds (summary.json's executionsPerSecond;
  fuzzer_stats' execs_done over run_time, or with -n, where AFL++ 4.04c writes no
  fuzzer_stats, plot_data's last total_execs over its relative_time).
- first finding: seconds to the first finding of any kind and its kind (summary.json's
  firstSeconds), and to the first crash, hang or memory blow-up, the only kinds AFL++ finds
  (the time in the names of its crashes/ and hangs/ files).
Prints one markdown table and each run's line as it ends.
"""
import argparse, glob, json, os, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
AFL_ENV = dict(AFL_SKIP_CPUFREQ="1", AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1", AFL_NO_UI="1", AFL_NO_AFFINITY="1", AFL_QUIET="1")

FIRST_EXEC_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
/* first-exec MARKER PROGRAM ARGS...: notes the time in MARKER the first time, then runs PROGRAM. */
int main(int argc, char **argv) {
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        dprintf(fd, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec);
        close(fd);
    }
    execvp(argv[2], argv + 2);
    return 127;
}
"""

XML_HARNESS_C = r"""
#include <libxml/parser.h>
/* xmllint --noout, as far as the parse goes: exit 0 when well-formed, 1 when not. */
int main(int argc, char **argv) {
    xmlDocPtr document = xmlReadFile(argv[1], NULL, 0);
    if (document == NULL) return 1;
    xmlFreeDoc(document);
    return 0;
}
"""

PLIST_LOADER = 'import plistlib,sys; plistlib.load(open(sys.argv[1],"rb"))'


def build_helpers(work):
    cc = shutil.which("cc") or shutil.which("clang") or "/opt/swift/usr/bin/clang"
    helpers = {}
    path = os.path.join(work, "first-exec.c")
    open(path, "w").write(FIRST_EXEC_C)
    helpers["first-exec"] = os.path.join(work, "first-exec")
    subprocess.run([cc, "-O2", path, "-o", helpers["first-exec"]], check=True)
    if shutil.which("afl-clang-fast"):
        path = os.path.join(work, "xml-harness.c")
        open(path, "w").write(XML_HARNESS_C)
        helpers["xml-harness-afl"] = os.path.join(work, "xml-harness-afl")
        subprocess.run(["afl-clang-fast", "-O2", "-I/usr/include/libxml2", path, "-lxml2", "-o", helpers["xml-harness-afl"]], check=True,
                       env=dict(os.environ, AFL_QUIET="1"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return helpers


def build_yaml_worker():
    package = os.path.join(HERE, "yaml-worker")
    subprocess.run(["swift", "build", "-c", "release", "--package-path", package], check=True, stdout=subprocess.DEVNULL)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--package-path", package, "--show-bin-path"], check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, "yaml-worker")


def watch(command, seconds, env, cwd=None):
    """Runs command to its end (killed at seconds + 120): its own peak VmHWM in MB and wall time."""
    start = time.time()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
    peak = 0
    while process.poll() is None:
        try:
            for line in open(f"/proc/{process.pid}/status"):
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        if time.time() - start > seconds + 120:
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(0.05)
    return peak / 1024, time.time() - start


def first_input(command, marker, env, limit=30):
    """Seconds from start until the wrapped target first ran (the marker's time), then stops the fuzzer."""
    if os.path.exists(marker):
        os.remove(marker)
    start = time.time()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    while process.poll() is None and not os.path.exists(marker) and time.time() - start < limit:
        time.sleep(0.005)
    time.sleep(0.05)
    for sig in (signal.SIGINT, signal.SIGKILL):
        if process.poll() is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    try:
        return float(open(marker).read()) - start
    except (OSError, ValueError):
        return None


def corrupt_fuzz_command(binary, target, seeds, seconds, reports, extra):
    return [binary, "run", "--target", " ".join(target + ["@@"]), "--corpus", seeds, "--duration", f"{seconds}s", "--jobs", "1",
            "--no-minimize", "--reports", reports] + extra


def afl_command(target, seeds, seconds, out, instrumented):
    return ["afl-fuzz", "-i", seeds, "-o", out, "-V", str(seconds), "-t", "1000"] + ([] if instrumented else ["-n"]) + ["--"] + target + ["@@"]


def run_corrupt_fuzz(label, binary, target, seeds, extra, seconds, work, helpers):
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
    reports = tempfile.mkdtemp(dir=work)
    marker = os.path.join(work, "marker")
    first = first_input(corrupt_fuzz_command(binary, [helpers["first-exec"], marker] + target, seeds, seconds, reports, extra), marker, env)
    shutil.rmtree(reports, ignore_errors=True)
    reports = tempfile.mkdtemp(dir=work)
    peak, wall = watch(corrupt_fuzz_command(binary, target, seeds, seconds, reports, extra), seconds, env)
    summary = json.load(open(os.path.join(reports, "latest", "summary.json")))["targets"][0]
    findings = sorted((f["firstSeconds"], f["kind"]) for f in summary["findings"])
    crashes = [f for f in findings if f[1] in ("crash", "hang", "oom")]
    shutil.rmtree(reports, ignore_errors=True)
    return dict(name=f"corrupt-fuzz {label}", first=first, peak=peak, rate=summary["executionsPerSecond"], finding=findings[0] if findings else None,
                crash=crashes[0] if crashes else None, findings=len(findings), wall=wall)


def run_afl(name, target, seeds, seconds, work, helpers, instrumented=False):
    env = dict(os.environ, **AFL_ENV)
    out = tempfile.mkdtemp(dir=work)
    marker = os.path.join(work, "marker")
    # The wrapper is no instrumented binary: AFL++ must not check it for its fork server.
    first = first_input(afl_command([helpers["first-exec"], marker] + target, seeds, seconds, out, instrumented), marker,
                        dict(env, AFL_SKIP_BIN_CHECK="1"))
    shutil.rmtree(out, ignore_errors=True)
    out = tempfile.mkdtemp(dir=work)
    peak, wall = watch(afl_command(target, seeds, seconds, out, instrumented), seconds, env)
    # Instrumented, AFL++ writes into out/default; with -n into out itself, and (4.04c) no
    # fuzzer_stats: then plot_data's last line (written at the end) gives the executions.
    folder = os.path.join(out, "default") if os.path.isdir(os.path.join(out, "default")) else out
    rate = None
    try:
        stats = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in open(os.path.join(folder, "fuzzer_stats")) if ":" in line)}
        rate = int(stats["execs_done"]) / max(1, int(stats["run_time"]))
    except (OSError, KeyError):
        lines = [line for line in open(os.path.join(folder, "plot_data")) if not line.startswith("#")] if os.path.exists(os.path.join(folder, "plot_data")) else []
        if lines:
            fields = [field.strip() for field in lines[-1].split(",")]
            rate = int(fields[11]) / max(1, int(fields[0]))
    found = []
    for kind, subfolder in (("crash", "crashes"), ("hang", "hangs")):
        for path in glob.glob(os.path.join(folder, subfolder, "id:*")):
            if "time:" in path:
                found.append((int(os.path.basename(path).split("time:")[1].split(",")[0]) / 1000, kind))
    found.sort()
    shutil.rmtree(out, ignore_errors=True)
    return dict(name=name, first=first, peak=peak, rate=rate, finding=found[0] if found else None, crash=found[0] if found else None,
                findings=len(found), wall=wall)


def describe(row):
    first = f"{row['first']:.2f} s" if row["first"] is not None else "none"
    rate = f"{row['rate']:,.0f}" if row["rate"] is not None else "?"
    finding = f"{row['finding'][0]:.1f} s ({row['finding'][1]})" if row["finding"] else "none"
    crash = f"{row['crash'][0]:.1f} s ({row['crash'][1]})" if row["crash"] else "none"
    return first, f"{row['peak']:.1f} MB", rate, finding, crash


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corrupt-fuzz", action="append", required=True, metavar="LABEL=PATH")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--yaml-worker")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--no-afl", action="store_true")
    args = parser.parse_args()
    binaries = [(spec.split("=", 1)[0], os.path.abspath(spec.split("=", 1)[1])) for spec in args.corrupt_fuzz]
    work = tempfile.mkdtemp(prefix="real-targets-")
    helpers = build_helpers(work)
    xmllint = shutil.which("xmllint")
    targets = [
        ("xml", "`xmllint --noout`, 20 libxml2 test documents", [xmllint, "--noout"], os.path.join(ROOT, "Benchmarks", "pace", "xml-seeds"),
         ["--format", "xml"], False),
        ("plist", "`python3 plistlib.load`, 15 property lists", [sys.executable, "-c", PLIST_LOADER], os.path.join(ROOT, "Corpus", "plists"),
         ["--format", "binary-plist"], False),
        ("yaml", "Yams (a Swift package) through a worker, 4 YAML files", None, os.path.join(HERE, "yaml-seeds"), ["--worker"], True),
    ]
    rows = []
    for key, title, target, seeds, extra, is_worker in targets:
        if args.only and key not in args.only:
            continue
        if is_worker:
            target = [args.yaml_worker or build_yaml_worker()]
        for label, binary in binaries:
            row = run_corrupt_fuzz(label, binary, target, seeds, extra, args.seconds, work, helpers)
            rows.append((title, row))
            print(title, "|", row["name"], "|", " | ".join(describe(row)), f"| {row['findings']} findings, wall {row['wall']:.1f} s", flush=True)
        if args.no_afl or not shutil.which("afl-fuzz"):
            continue
        plans = [("AFL++ `-n`", target, False)]
        if key == "xml" and "xml-harness-afl" in helpers:
            plans.append(("AFL++, afl-clang-fast harness", [helpers["xml-harness-afl"]], True))
        for name, afl_target, instrumented in plans:
            row = run_afl(name, afl_target, seeds, args.seconds, work, helpers, instrumented)
            rows.append((title, row))
            print(title, "|", row["name"], "|", " | ".join(describe(row)), f"| {row['findings']} findings, wall {row['wall']:.1f} s", flush=True)
    print("\n| target | fuzzer | first input | peak memory of the fuzzer | inputs/s | first finding | first crash or hang |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for title, row in rows:
        print(f"| {title} | {row['name']} | " + " | ".join(describe(row)) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
