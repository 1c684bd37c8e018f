#!/usr/bin/env python3
"""Runs a GitHub Actions workflow of this repository on this machine, without network.

Every `run:` step of every job runs, in `needs` order, once per matrix combination, with
`${{ matrix.* }}`, `${{ env.* }}`, `${{ inputs.* }}` (and `|| 'default'`) and
`${{ github.run_id }}` substituted, the workflow's, job's and step's `env` set, in a fresh
checkout of the working tree (see checkout(); .build is kept between jobs, as a build cache). Of
the `uses:` steps:

- actions/checkout: the clone above;
- actions/upload-artifact and actions/download-artifact: copies into and out of a local
  artifacts folder (so the merge job sees the shards' outputs);
- actions/cache/restore and actions/cache/save: a local cache folder, restored by key or
  prefix as GitHub does;
- any other (the JUnit reporter): skipped, after checking that the files it is given exist
  and, for JUnit files, validate against junit-10.xsd with xmllint (corrupt-fuzz's copy: this
  repository's, or, in a package that depends on corrupt-fuzz, its checkout's under .build).

Steps run as GitHub runs them: `bash -e` in the workspace; after a failed step, only steps
whose `if:` says always() or failure() run, and the job fails.

    python3 .github/nightly/run-workflow.py .github/workflows/nightly-fuzz.yml --input seconds=5
"""

import argparse
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JUNIT_XSD = os.path.join("Tests", "CorruptFuzzReportingTests", "Resources", "junit-10.xsd")


def junit_schema(workspace):
    """corrupt-fuzz's junit-10.xsd: in this repository, or in a corrupt-fuzz checkout of the
    workspace (the job copied into a package that depends on corrupt-fuzz); None if neither."""
    candidates = [os.path.join(ROOT, JUNIT_XSD), os.path.join(workspace, JUNIT_XSD)]
    candidates += sorted(glob.glob(os.path.join(workspace, ".build", "checkouts", "*", JUNIT_XSD)))
    return next((path for path in candidates if os.path.isfile(path)), None)


def substitute(text, context):
    """Replaces ${{ expr }} with its value; expr is `a.b`, `'literal'` or `x || y`."""

    def value(expr):
        for alternative in expr.split("||"):
            alternative = alternative.strip()
            if alternative.startswith("'") and alternative.endswith("'"):
                return alternative[1:-1]
            scope, _, name = alternative.partition(".")
            found = context.get(scope, {}).get(name)
            if found not in (None, ""):
                return str(found)
        return ""

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: value(m.group(1)), str(text))


def job_order(jobs):
    done, order = set(), []
    while len(order) < len(jobs):
        progress = False
        for name, job in jobs.items():
            needs = job.get("needs", [])
            needs = [needs] if isinstance(needs, str) else needs
            if name not in done and all(n in done for n in needs):
                order.append(name)
                done.add(name)
                progress = True
        if not progress:
            sys.exit("cycle in needs")
    return order


def matrix_combinations(job):
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    keys = [k for k in matrix if k not in ("include", "exclude")]
    if not keys:
        return [{}]
    return [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]


def checkout(workspace):
    """A fresh checkout of the current commit plus the working tree's changes to tracked files
    and its untracked files (so the script tests what is on disk). One clone serves every job:
    before each, everything but .build (a build cache, as a CI cache would keep) is reset."""
    if not os.path.isdir(os.path.join(workspace, ".git")):
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", ROOT, workspace], check=True)
    subprocess.run(["git", "-C", workspace, "fetch", "-q", ROOT, "HEAD"], check=True)
    subprocess.run(["git", "-C", workspace, "checkout", "-q", "--force", "--detach",
                    subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()],
                   check=True)
    subprocess.run(["git", "-C", workspace, "clean", "-q", "-ffdx", "-e", ".build"], check=True)
    diff = subprocess.run(["git", "-C", ROOT, "diff", "HEAD", "--binary"], check=True, capture_output=True).stdout
    if diff:
        subprocess.run(["git", "-C", workspace, "apply", "--binary", "-"], input=diff, check=True)
    untracked = subprocess.run(["git", "-C", ROOT, "ls-files", "--others", "--exclude-standard", "-z"], check=True,
                               capture_output=True, text=True).stdout.split("\0")
    for path in filter(None, untracked):
        os.makedirs(os.path.dirname(os.path.join(workspace, path)) or workspace, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, path), os.path.join(workspace, path))


def run_uses(step, with_, workspace, state, log):
    action = step["uses"].split("@")[0]
    if action == "actions/checkout":
        return True
    if action == "actions/upload-artifact":
        folder = os.path.join(state["artifacts"], with_["name"])
        os.makedirs(folder, exist_ok=True)
        for path in str(with_["path"]).split():
            source = os.path.join(workspace, path)
            if os.path.isdir(source):
                shutil.copytree(source, folder, dirs_exist_ok=True, symlinks=True)
            elif os.path.exists(source):
                shutil.copy2(source, folder)
            elif with_.get("if-no-files-found") == "error":
                log(f"  no files at {path}")
                return False
        return True
    if action == "actions/download-artifact":
        destination = os.path.join(workspace, with_.get("path", "."))
        names = sorted(os.listdir(state["artifacts"])) if os.path.isdir(state["artifacts"]) else []
        pattern = with_.get("pattern") or with_.get("name") or "*"
        for name in names:
            if glob.fnmatch.fnmatch(name, pattern):
                shutil.copytree(os.path.join(state["artifacts"], name), os.path.join(destination, name), dirs_exist_ok=True, symlinks=True)
        return True
    if action in ("actions/cache/restore", "actions/cache"):
        keys = [with_["key"]] + [k.strip() for k in str(with_.get("restore-keys", "")).splitlines() if k.strip()]
        saved = sorted(os.listdir(state["cache"]), key=lambda n: os.path.getmtime(os.path.join(state["cache"], n)), reverse=True)
        for key in keys:
            hit = next((n for n in saved if n == key or (key != with_["key"] and n.startswith(key))), None)
            if hit:
                log(f"  cache hit: {hit}")
                shutil.copytree(os.path.join(state["cache"], hit), os.path.join(workspace, with_["path"]), dirs_exist_ok=True)
                return True
        log("  cache miss")
        return True
    if action == "actions/cache/save":
        source = os.path.join(workspace, with_["path"])
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(state["cache"], with_["key"]), dirs_exist_ok=True)
            log(f"  cache saved: {with_['key']}")
        return True
    # A reporter: not run here, but what it is given must be there and, for JUnit, valid.
    paths = [v for k, v in with_.items() if k.endswith("paths") or k == "path"]
    for pattern in paths:
        files = glob.glob(os.path.join(workspace, str(pattern)))
        if not files:
            log(f"  {action}: nothing at {pattern}")
            return False
        for file in files:
            if file.endswith(".xml"):
                schema = junit_schema(workspace)
                checked = ["--schema", schema] if schema else []
                if subprocess.run(["xmllint", "--noout", *checked, file]).returncode != 0:
                    log(f"  {action}: {os.path.relpath(file, workspace)} is not valid")
                    return False
                what = "validates against junit-10.xsd" if schema else "is well-formed (no junit-10.xsd found)"
                log(f"  {action} skipped; its input {os.path.relpath(file, workspace)} {what}")
    return True


def run_job(name, job, workflow, matrix, inputs, state, log):
    workspace = state["workspace"]
    checkout(workspace)
    context = {"matrix": matrix, "inputs": inputs, "github": {"run_id": state["run_id"], "workspace": workspace}, "env": {}}
    env = dict(os.environ, CI="true", GITHUB_RUN_ID=state["run_id"], GITHUB_WORKSPACE=workspace,
               GITHUB_STEP_SUMMARY=os.path.join(workspace, ".step-summary"), GITHUB_ENV=os.path.join(workspace, ".github-env"))
    for scope in (workflow.get("env") or {}, job.get("env") or {}):
        for key, value in scope.items():
            env[key] = context["env"][key] = substitute(value, context)
    failed = False
    for step in job["steps"]:
        title = substitute(step.get("name") or step.get("uses") or step.get("run", "").splitlines()[0], context)
        condition = str(step.get("if", ""))
        if failed and "always()" not in condition and "failure()" not in condition:
            log(f"- {title}: not run (an earlier step failed)")
            continue
        step_env = dict(env)
        for key, value in (step.get("env") or {}).items():
            step_env[key] = substitute(value, context)
        if "uses" in step:
            with_ = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
            log(f"- {title} ({step['uses']})")
            if not run_uses(step, with_, workspace, state, log):
                failed = True
            continue
        script = substitute(step["run"], context)
        log(f"- {title}\n  $ {script.strip()}")
        result = subprocess.run(["bash", "-e", "-c", script], cwd=workspace, env=step_env)
        if result.returncode != 0:
            log(f"  exit {result.returncode}")
            failed = True
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workflow")
    parser.add_argument("--input", action="append", default=[], help="NAME=VALUE for workflow_dispatch inputs")
    parser.add_argument("--job", action="append", default=[], help="run only these jobs")
    parser.add_argument("--state", help="folder for the artifacts and the cache (kept between runs)")
    args = parser.parse_args()
    with open(args.workflow) as f:
        workflow = yaml.safe_load(f)
    triggers = workflow.get(True) or workflow.get("on") or {}
    declared = ((triggers.get("workflow_dispatch") or {}) if isinstance(triggers, dict) else {}).get("inputs") or {}
    inputs = {name: spec.get("default", "") for name, spec in declared.items()}
    inputs.update(dict(item.split("=", 1) for item in args.input))
    state_dir = args.state or tempfile.mkdtemp(prefix="workflow-state-")
    state = {"artifacts": os.path.join(state_dir, "artifacts"), "cache": os.path.join(state_dir, "cache"),
             "run_id": str(int.from_bytes(os.urandom(3), "big")), "workspace": os.path.join(state_dir, "workspace")}
    shutil.rmtree(state["artifacts"], ignore_errors=True)
    os.makedirs(state["artifacts"])
    os.makedirs(state["cache"], exist_ok=True)

    def log(text):
        print(text, flush=True)

    results = {}
    for name in job_order(workflow["jobs"]):
        if args.job and name not in args.job:
            continue
        job = workflow["jobs"][name]
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        if any(not results.get(n, True) for n in needs) and "always()" not in str(job.get("if", "")):
            log(f"== job {name}: not run (a needed job failed)")
            results[name] = False
            continue
        ok = True
        for matrix in matrix_combinations(job):
            log(f"== job {name} {matrix if matrix else ''}")
            ok = run_job(name, job, workflow, matrix, inputs, state, log) and ok
        results[name] = ok
        log(f"== job {name}: {'passed' if ok else 'FAILED'}")
    log(f"state (workspace, artifacts, cache): {state_dir}")
    sys.exit(0 if all(results.values()) else 1)


if __name__ == "__main__":
    main()
