#!/usr/bin/env python3
"""The reference implementations the validator sweep (ValidatorSweepTests) compares corrupt-fuzz's
validators with, run over many files in one process so a sweep of thousands of inputs stays fast.
Standard library only.

    python3 Scripts/validator-sweep.py plistlib FILE...       Python's plistlib.loads
    python3 Scripts/validator-sweep.py xmllint FILE...        xmllint --noout --nonet FILE
    python3 Scripts/validator-sweep.py xmllint-memory FILE... xmllint --noout --nonet --memory FILE
    python3 Scripts/validator-sweep.py xmllint-schema XSD FILE...
                                                              xmllint --noout --nonet --schema XSD FILE
    python3 Scripts/validator-sweep.py sqlite3 DATABASE...    sqlite3 -readonly: PRAGMA integrity_check
                                                              and PRAGMA quick_check

`--list PATH` instead of FILE... reads the files' paths from PATH, one a line. Each file gives one
JSON line on standard output, in the order given: {"path", "ok", "detail"} (plistlib: "format",
binary or xml; sqlite3: "integrity" and "quick", the rows or the error of each). "ok" is the
reference's verdict: plistlib read the file; xmllint exited 0; SQLite opened the database and
both checks said "ok". A tool that runs longer than --timeout seconds (default 30) gives
"ok": null and "detail": "timeout". The tools run on --jobs workers (default: the cores).
"""
import argparse
import concurrent.futures
import json
import os
import plistlib
import subprocess
import sys


def check_plistlib(path, _):
    with open(path, "rb") as f:
        data = f.read()
    kind = "binary" if data[:8] == b"bplist00" else "xml"
    try:
        plistlib.loads(data)
        return {"ok": True, "format": kind, "detail": ""}
    # RecursionError, MemoryError, struct.error, ValueError, ExpatError...: all a refusal.
    except BaseException as error:  # noqa: BLE001
        if isinstance(error, KeyboardInterrupt):
            raise
        return {"ok": False, "format": kind, "detail": f"{type(error).__name__}: {str(error)[:300]}"}


def run(arguments, timeout):
    try:
        done = subprocess.run(arguments, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "timeout", ""
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def check_xmllint(extra):
    def check(path, timeout):
        status, _, errors = run(["xmllint", "--noout", "--nonet", *extra, path], timeout)
        if status is None:
            return {"ok": None, "detail": "timeout"}
        # The first message, without the file's name (the sweep names the file itself).
        first = next((line for line in errors.splitlines() if line.strip()), "")
        return {"ok": status == 0, "status": status, "detail": first.replace(path, "FILE")[:300]}

    return check


def check_sqlite3(path, timeout):
    result = {}
    for pragma in ("integrity_check", "quick_check"):
        status, out, errors = run(["sqlite3", "-init", "/dev/null", "-readonly", "-bail", path, f"PRAGMA {pragma};"], timeout)
        if status is None:
            return {"ok": None, "detail": "timeout", "integrity": None, "quick": None}
        rows = [line for line in out.splitlines() if line.strip()]
        key = "integrity" if pragma == "integrity_check" else "quick"
        result[key] = {"status": status, "rows": rows[:20], "error": errors.strip()[:300]}
    ok = all(result[k]["status"] == 0 and result[k]["rows"] == ["ok"] for k in ("integrity", "quick"))
    first = result["integrity"]
    detail = first["error"] or "; ".join(first["rows"][:3])
    return {"ok": ok, "detail": detail[:300], **result}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["plistlib", "xmllint", "xmllint-memory", "xmllint-schema", "sqlite3"])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--list", help="a file of paths, one a line")
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    options = parser.parse_args()
    files = list(options.files)
    extra = []
    if options.mode == "xmllint-schema":
        if not files:
            parser.error("xmllint-schema needs the schema first")
        extra = ["--schema", files.pop(0)]
    if options.list:
        with open(options.list, encoding="utf-8") as f:
            files += [line.rstrip("\n") for line in f if line.strip()]
    if options.mode == "plistlib":
        # In this process: plistlib is what is compared, and it is fast.
        results = (check_plistlib(path, options.timeout) for path in files)
    else:
        check = {
            "xmllint": check_xmllint([]),
            "xmllint-memory": check_xmllint(["--memory"]),
            "xmllint-schema": check_xmllint(extra),
            "sqlite3": check_sqlite3,
        }[options.mode]
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs))
        results = pool.map(lambda path: check(path, options.timeout), files)
    for path, result in zip(files, results):
        print(json.dumps({"path": path, **result}), flush=False)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
