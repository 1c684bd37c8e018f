#!/usr/bin/env python3
"""Reads GitHub Actions workflows and writes their steps as shell scripts, for
Scripts/fresh-machine-check.sh, which runs them in order in its Debian root.

    fresh-machine-workflows.py WORKFLOWS-DIR --workspace /src/corrupt-fuzz --plan /var/tmp/fresh-workflows \
        --host-root /var/tmp/corrupt-fuzz-fresh-root/merged [--workflows auto|a.yml,b.yml] [--input seconds=5]

Writes PLAN/plan.tsv (under --host-root, paths in it as the root sees them), one step a line:

    number  workflow  job  instance  needs  job-if  kind  step-if  title  script  note

(tab-separated, "-" for an empty field). kind: `run` (a `run:` step), `emulated` (a GitHub
service done with local copies: actions/checkout resets the clone as a fresh checkout would,
keeping .build as a CI cache would; upload-artifact and download-artifact copy into and out of
PLAN/state/WORKFLOW/artifacts; actions/cache restores and saves PLAN/state/WORKFLOW/cache),
`skip` (any other action: it needs GitHub), `job-skip` (a job for a runner that is not Linux).
step-if: `success`, `always` or `failure`. Jobs come in `needs` order, once per matrix
combination, with ${{ matrix.* }}, ${{ env.* }}, ${{ inputs.* }} (workflow_dispatch defaults,
then --input), ${{ github.run_id }}, ${{ github.workspace }}, ${{ github.event_name }} and
`a || 'b'` substituted; anything else is empty (said in the note). `--workflows auto`: every
workflow triggered by `schedule` or `pull_request`.
"""

import argparse
import itertools
import os
import re
import shlex
import sys

import yaml

EMULATED = {
    "actions/checkout",
    "actions/upload-artifact",
    "actions/download-artifact",
    "actions/cache",
    "actions/cache/restore",
    "actions/cache/save",
}


def triggers(workflow):
    on = workflow.get(True, workflow.get("on")) or {}
    if isinstance(on, str):
        return {on: {}}
    if isinstance(on, list):
        return {name: {} for name in on}
    return {name: (spec or {}) for name, spec in on.items()}


class Context:
    def __init__(self, values):
        self.values = values
        self.unknown = set()

    def value(self, expr):
        for alternative in expr.split("||"):
            alternative = alternative.strip()
            if len(alternative) >= 2 and alternative[0] == alternative[-1] == "'":
                return alternative[1:-1]
            match = re.fullmatch(r"([A-Za-z_]+)\.([A-Za-z0-9_.-]+)", alternative)
            if not match:
                self.unknown.add(alternative)
                continue
            scope, name = match.groups()
            if scope not in self.values:
                self.unknown.add(alternative)
                continue
            found = self.values[scope].get(name)
            if found not in (None, ""):
                return str(found)
        return ""

    def substitute(self, text):
        return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: self.value(m.group(1)), str(text))


def job_order(jobs):
    done, order = set(), []
    while len(order) < len(jobs):
        progress = False
        for name, job in jobs.items():
            if name not in done and all(n in done for n in as_list(job.get("needs"))):
                order.append(name)
                done.add(name)
                progress = True
        if not progress:
            sys.exit("a cycle in the jobs' needs")
    return order


def as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def matrix_combinations(job):
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    if not isinstance(matrix, dict):
        return [{}]
    keys = [k for k in matrix if k not in ("include", "exclude")]
    combos = [dict(zip(keys, values)) for values in itertools.product(*(as_list(matrix[k]) for k in keys))] if keys else [{}]
    for excluded in matrix.get("exclude") or []:
        combos = [c for c in combos if not all(c.get(k) == v for k, v in excluded.items())]
    for included in matrix.get("include") or []:
        extended = False
        for combo in combos:
            if all(combo.get(k, v) == v for k, v in included.items() if k in keys):
                combo.update({k: v for k, v in included.items() if k not in keys})
                extended = True
        if not extended:
            combos.append(dict(included))
    return combos or [{}]


def step_condition(step):
    condition = str(step.get("if", ""))
    if "always()" in condition:
        return "always", ""
    if "failure()" in condition:
        return "failure", ""
    if condition and condition.strip() not in ("success()", "${{ success() }}"):
        return "success", f"condition not evaluated: {condition}"
    return "success", ""


def clean(text):
    text = re.sub(r"[\t\r\n]+", " ", str(text)).strip()
    return text or "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workflows_dir")
    parser.add_argument("--workspace", required=True, help="the clone, as the root sees it")
    parser.add_argument("--plan", required=True, help="the plan folder, as the root sees it")
    parser.add_argument("--host-root", required=True, help="the root, as this machine sees it")
    parser.add_argument("--workflows", default="auto")
    parser.add_argument("--input", action="append", default=[], help="NAME=VALUE, a workflow_dispatch input")
    args = parser.parse_args()

    files = sorted(f for f in os.listdir(args.workflows_dir) if f.endswith((".yml", ".yaml")))
    workflows = []
    for file in files:
        with open(os.path.join(args.workflows_dir, file)) as handle:
            workflow = yaml.safe_load(handle)
        on = triggers(workflow)
        if args.workflows == "auto":
            if not ({"schedule", "pull_request", "pull_request_target"} & set(on)):
                print(f"{file}: not a nightly or pull-request workflow ({', '.join(on)}), left out")
                continue
        elif file not in args.workflows.split(","):
            continue
        workflows.append((file, workflow, on))
    if args.workflows != "auto":
        missing = set(args.workflows.split(",")) - {f for f, _, _ in workflows}
        if missing:
            sys.exit(f"no such workflow: {', '.join(sorted(missing))}")

    plan_host = args.host_root.rstrip("/") + args.plan
    os.makedirs(os.path.join(plan_host, "steps"), exist_ok=True)
    rows = []
    overrides = dict(item.split("=", 1) for item in args.input)
    run_id = str(int.from_bytes(os.urandom(3), "big"))

    for file, workflow, on in workflows:
        stem = os.path.splitext(file)[0]
        state = f"{args.plan}/state/{stem}"
        event = "schedule" if "schedule" in on else "pull_request" if "pull_request" in on else next(iter(on), "workflow_dispatch")
        declared = (on.get("workflow_dispatch") or {}).get("inputs") or {}
        inputs = {name: (spec or {}).get("default", "") for name, spec in declared.items()}
        inputs.update({k: v for k, v in overrides.items() if k in declared})
        print(f"{file}: triggers {', '.join(on)}; run as {event}; inputs {inputs}")
        for job_name in job_order(workflow.get("jobs") or {}):
            job = workflow["jobs"][job_name]
            needs = ",".join(as_list(job.get("needs"))) or "-"
            job_if = clean(job.get("if", ""))
            runs_on = " ".join(str(r) for r in as_list(job.get("runs-on")))
            for matrix in matrix_combinations(job):
                instance = job_name + (("[" + ",".join(f"{k}={v}" for k, v in matrix.items()) + "]") if matrix else "")
                context = Context({
                    "matrix": matrix, "inputs": inputs, "env": {}, "secrets": {}, "vars": {},
                    "github": {"run_id": run_id, "run_number": "1", "workspace": args.workspace, "event_name": event,
                               "workflow": workflow.get("name", stem), "job": job_name, "ref": "refs/heads/main"},
                    "runner": {"os": "Linux", "arch": "X64", "temp": f"{state}/runner-temp"},
                })

                def add(kind, title, script="-", note="-", step_if="success"):
                    rows.append([str(len(rows) + 1), file, job_name, instance, needs, job_if, kind, step_if, clean(title), script, clean(note)])

                if not re.search(r"ubuntu|linux|self-hosted", runs_on, re.I):
                    add("job-skip", f"job on {runs_on}", note=f"needs a {runs_on} runner; this check runs Linux only")
                    continue
                env = {"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": args.workspace, "GITHUB_RUN_ID": run_id,
                       "GITHUB_EVENT_NAME": event, "RUNNER_OS": "Linux", "RUNNER_TEMP": f"{state}/runner-temp"}
                files_env = {"GITHUB_ENV": f"{state}/{instance}/github-env", "GITHUB_OUTPUT": f"{state}/{instance}/github-output",
                             "GITHUB_STEP_SUMMARY": f"{state}/{instance}/step-summary", "GITHUB_PATH": f"{state}/{instance}/github-path"}
                for scope in (workflow.get("env") or {}, job.get("env") or {}):
                    for key, value in scope.items():
                        env[key] = context.values["env"][key] = context.substitute(value)
                container = job.get("container")
                image = container.get("image") if isinstance(container, dict) else container
                services = " (services not started)" if job.get("services") else ""
                defaults_dir = ((job.get("defaults") or {}).get("run") or {}).get("working-directory") or \
                    ((workflow.get("defaults") or {}).get("run") or {}).get("working-directory")
                for index, step in enumerate(job.get("steps") or []):
                    context.unknown = set()
                    step_env = dict(env)
                    for key, value in (step.get("env") or {}).items():
                        step_env[key] = context.substitute(value)
                    title = context.substitute(step.get("name") or step.get("uses") or str(step.get("run", "")).strip().splitlines()[0])
                    step_if, condition_note = step_condition(step)
                    notes = [condition_note] if condition_note else []
                    if index == 0 and image:
                        notes.append(f"container {image}: the fresh root stands in for it{services}")
                    script_lines = ["#!/bin/bash", f"# {file}, job {instance}, step {index + 1}: {title}", "set -e",
                                    f"cd {shlex.quote(args.workspace)}",
                                    f"mkdir -p {shlex.quote(state + '/' + instance)} {shlex.quote(state + '/runner-temp')}"]
                    for key, value in files_env.items():
                        script_lines.append(f"export {key}={shlex.quote(value)}; touch \"${key}\"")
                    # Variables earlier steps wrote to $GITHUB_ENV (NAME=VALUE lines), and paths to $GITHUB_PATH.
                    script_lines.append('while IFS= read -r line; do case "$line" in *=*) export "${line%%=*}=${line#*=}" ;; esac; done <"$GITHUB_ENV"')
                    script_lines.append('while IFS= read -r line; do if [ -n "$line" ]; then PATH="$line:$PATH"; fi; done <"$GITHUB_PATH"; export PATH')
                    for key, value in step_env.items():
                        script_lines.append(f"export {key}={shlex.quote(value)}")
                    if "uses" in step:
                        action = step["uses"].split("@")[0]
                        with_ = {k: context.substitute(v) for k, v in (step.get("with") or {}).items()}
                        if action not in EMULATED:
                            add("skip", title, note=f"uses: {step['uses']} needs GitHub", step_if=step_if)
                            continue
                        body, note = emulate(action, with_, args.workspace, state)
                        notes.insert(0, note)
                        kind = "emulated"
                    else:
                        shell = step.get("shell") or ((job.get("defaults") or {}).get("run") or {}).get("shell") or "bash"
                        if shell not in ("bash", "sh"):
                            add("skip", title, note=f"shell {shell} is not run here", step_if=step_if)
                            continue
                        directory = step.get("working-directory") or defaults_dir
                        if directory:
                            script_lines.append(f"cd {shlex.quote(context.substitute(directory))}")
                        body_file = f"{args.plan}/steps/{len(rows) + 1:03d}-body.sh"
                        with open(args.host_root.rstrip("/") + body_file, "w") as handle:
                            handle.write(context.substitute(step["run"]))
                        # As GitHub runs it: `bash -e {0}` by default, `bash --noprofile --norc -eo pipefail {0}` for shell: bash.
                        if shell == "sh":
                            body = f"exec sh -e {shlex.quote(body_file)}"
                        elif step.get("shell") == "bash":
                            body = f"exec bash --noprofile --norc -eo pipefail {shlex.quote(body_file)}"
                        else:
                            body = f"exec bash -e {shlex.quote(body_file)}"
                        kind = "run"
                        minutes = step.get("timeout-minutes")
                        if minutes:
                            body = body.replace("exec ", f"exec timeout --kill-after=30 {int(float(minutes) * 60)} ", 1)
                    if context.unknown:
                        notes.append("empty: " + ", ".join(sorted(context.unknown)))
                    script = f"{args.plan}/steps/{len(rows) + 1:03d}.sh"
                    with open(args.host_root.rstrip("/") + script, "w") as handle:
                        handle.write("\n".join(script_lines + [body, ""]))
                    add(kind, title, script, "; ".join(notes) or "-", step_if)

    with open(os.path.join(plan_host, "plan.tsv"), "w") as handle:
        for row in rows:
            handle.write("\t".join(row) + "\n")
    for row in rows:
        print(f"{row[0]:>3} {row[6]:<9} {row[1]} {row[3]}: {row[8]}" + (f"  [{row[10]}]" if row[10] != "-" else ""))


def emulate(action, with_, workspace, state):
    """A GitHub service done with local copies: the body of its script and a note."""
    q = shlex.quote
    artifacts, cache = f"{state}/artifacts", f"{state}/cache"
    if action == "actions/checkout":
        return (f"git -C {q(workspace)} checkout -q --force HEAD\ngit -C {q(workspace)} clean -q -ffdx -e /.build\n",
                "emulated: a fresh checkout (git clean; .build kept as a build cache)")
    if action == "actions/upload-artifact":
        paths = [p.strip() for p in str(with_.get("path", "")).splitlines() if p.strip()]
        missing = "exit 1" if with_.get("if-no-files-found") == "error" else "true"
        lines = [f"dest={q(artifacts + '/' + with_.get('name', 'artifact'))}", 'mkdir -p "$dest"', "found=0", "shopt -s nullglob dotglob"]
        for path in paths:
            lines.append(f"for p in {path}; do [ -e \"$p\" ] || continue; found=1; if [ -d \"$p\" ]; then cp -a \"$p\"/. \"$dest\"/; else cp -a \"$p\" \"$dest\"/; fi; done")
        lines.append(f"[ $found = 1 ] || {{ echo 'no files at: {' '.join(paths)}'; {missing}; }}")
        return "\n".join(lines) + "\n", "emulated: upload-artifact copies into a local folder"
    if action == "actions/download-artifact":
        destination = with_.get("path") or "."
        lines = [f"mkdir -p {q(artifacts)} {q(destination)}", "shopt -s nullglob dotglob"]
        if with_.get("name"):
            lines.append(f"cp -a {q(artifacts + '/' + with_['name'])}/. {q(destination)}/")
        else:
            merge = str(with_.get("merge-multiple", "")).lower() == "true"
            pattern = with_.get("pattern") or "*"
            target = q(destination) + ("" if merge else '/"$name"')
            lines.append(f"for d in {q(artifacts)}/*; do name=$(basename \"$d\"); case \"$name\" in {pattern}) "
                         f"mkdir -p {target}; cp -a \"$d\"/. {target}/ ;; esac; done")
        return "\n".join(lines) + "\n", "emulated: download-artifact copies from a local folder"
    paths = [p.strip() for p in str(with_.get("path", "")).splitlines() if p.strip()]
    key = with_.get("key", "")
    if action in ("actions/cache", "actions/cache/restore"):
        keys = [key] + [k.strip() for k in str(with_.get("restore-keys", "")).splitlines() if k.strip()]
        lines = [f"mkdir -p {q(cache)}", "hit="]
        lines.append(f"[ -d {q(cache + '/' + key)} ] && hit={q(key)}")
        for prefix in keys[1:]:
            lines.append(f"[ -n \"$hit\" ] || hit=$(ls -t {q(cache)} | while read -r n; do case \"$n\" in {q(prefix)}*) echo \"$n\"; break ;; esac; done)")
        lines.append('if [ -z "$hit" ]; then echo "cache miss"; exit 0; fi')
        lines.append('echo "cache hit: $hit"')
        for path in paths:
            lines.append(f"if [ -e {q(cache)}/\"$hit\"/{q(path)} ]; then mkdir -p {q(path)}; cp -a {q(cache)}/\"$hit\"/{q(path)}/. {q(path)}/; fi")
        note = "emulated: cache restore from a local folder" + ("; actions/cache's save at the job's end is not done" if action == "actions/cache" else "")
        return "\n".join(lines) + "\n", note
    lines = [f"mkdir -p {q(cache + '/' + key)}"]
    for path in paths:
        lines.append(f"if [ -e {q(path)} ]; then mkdir -p {q(cache + '/' + key + '/' + path)}; cp -a {q(path)}/. {q(cache + '/' + key + '/' + path)}/; fi")
    return "\n".join(lines) + "\n", "emulated: cache save into a local folder"


if __name__ == "__main__":
    main()
