#!/usr/bin/env python3
"""Checks the GitHub workflows as GitHub reads them (.ci/run runs it).

Every file in .github/workflows parses as YAML into a workflow with a
trigger and jobs, each job running steps or calling a workflow. A job that
calls a workflow of this repository (`uses: ./.github/workflows/X.yml`)
names a file that exists and that can be called (`on: workflow_call`), with
the inputs it requires. A workflow started by another one's run
(`on: workflow_run`) names workflows that exist. Every custom job
dist-workspace.toml names
(`publish-jobs = ["./X"]` and the like) is such a file, and release.yml
(which `dist generate` writes from that file) calls it.

Needs PyYAML (`pip install pyyaml`).
"""

import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
# dist's keys that name custom jobs: each a list of "./NAME" entries.
DIST_JOB_KEYS = [
    "plan-jobs",
    "build-local-jobs",
    "build-global-jobs",
    "host-jobs",
    "publish-jobs",
    "post-announce-jobs",
]


def triggers(workflow):
    # YAML 1.1 reads the key `on` as true.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return on or {}


def check_workflow(path, workflows, problems):
    workflow = workflows[path.name]
    if not isinstance(workflow, dict):
        problems.append(f"{path.name}: not a mapping")
        return
    if not triggers(workflow):
        problems.append(f"{path.name}: no `on` trigger")
    jobs = workflow.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        problems.append(f"{path.name}: no jobs")
        return
    for name, job in jobs.items():
        if not isinstance(job, dict):
            problems.append(f"{path.name}: job {name} is not a mapping")
            continue
        uses = job.get("uses")
        if uses is None:
            if not isinstance(job.get("steps"), list) or not job["steps"]:
                problems.append(f"{path.name}: job {name} has neither steps nor uses")
            continue
        if not uses.startswith("./.github/workflows/"):
            continue
        called = Path(uses).name
        if called not in workflows:
            problems.append(f"{path.name}: job {name} calls {uses}, which does not exist")
            continue
        call = triggers(workflows[called]).get("workflow_call")
        if "workflow_call" not in triggers(workflows[called]):
            problems.append(f"{path.name}: job {name} calls {called}, which has no `on: workflow_call`")
            continue
        given = set((job.get("with") or {}).keys())
        for input_name, spec in ((call or {}).get("inputs") or {}).items():
            if (spec or {}).get("required") and input_name not in given:
                problems.append(f"{path.name}: job {name} does not pass {called}'s required input {input_name}")


def check_chained(workflows, problems):
    names = {w.get("name") for w in workflows.values() if isinstance(w, dict)}
    for file, workflow in workflows.items():
        if not isinstance(workflow, dict):
            continue
        run = triggers(workflow).get("workflow_run") or {}
        for name in run.get("workflows") or []:
            if name not in names:
                problems.append(f"{file}: runs after workflow {name!r}, which no workflow is named")
        if "workflow_run" in triggers(workflow) and not run.get("workflows"):
            problems.append(f"{file}: `workflow_run` names no workflow")


def check_dist(workflows, problems):
    config = tomllib.loads((ROOT / "dist-workspace.toml").read_text())
    dist = config.get("dist", {})
    release = workflows.get("release.yml")
    if release is None:
        problems.append("release.yml (dist generate) is missing")
        return
    called = {job.get("uses") for job in release.get("jobs", {}).values() if isinstance(job, dict)}
    for key in DIST_JOB_KEYS:
        for entry in dist.get(key, []):
            if not entry.startswith("./"):
                continue  # dist's own jobs (e.g. "homebrew", "npm")
            file = entry[2:] + ".yml"
            if file not in workflows:
                problems.append(f"dist-workspace.toml {key} names {entry}: .github/workflows/{file} does not exist")
            elif f"./.github/workflows/{file}" not in called:
                problems.append(
                    f"dist-workspace.toml {key} names {entry}, which release.yml does not call: run `dist generate`"
                )


def main():
    problems = []
    workflows = {}
    paths = sorted(WORKFLOWS.glob("*.yml")) + sorted(WORKFLOWS.glob("*.yaml"))
    for path in paths:
        try:
            workflows[path.name] = yaml.safe_load(path.read_text())
        except yaml.YAMLError as error:
            problems.append(f"{path.name}: not valid YAML: {error}")
    for path in paths:
        if path.name in workflows:
            check_workflow(path, workflows, problems)
    check_chained(workflows, problems)
    check_dist(workflows, problems)
    for problem in problems:
        print(f"check-workflows: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-workflows: {len(paths)} workflows read and consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
