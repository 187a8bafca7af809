"""desched against an earlier desched: the lint cases users run, this checkout A/B against a git revision.

``python bench/baseline.py --rev REV [--runs N] [--files N] [--json PATH]``. The revision is installed beside this
checkout (``pip install --no-deps --target``) and both run as ``python -m desched`` from the same interpreter and
dependencies, so that only desched's own code differs; the two alternate A B A B so that drift on the machine
cancels, and the ratio is this checkout's median over the revision's (below 1: faster now).

1. One policy file (the pre-commit case): ``desched lint FILE``, a policy ConfigMap without chart values, where no
   chart model should load.
2. Repository: ``--files`` generated files (policies, policy ConfigMaps, Deployments, PDBs), pinned to one core.
3. GitOps: 200 Flux HelmReleases, Argo CD Applications and kustomizations with ``helmCharts``, pinned to one core:
   the case where chart values are present and the chart model does its work.
4. One file in its repository (pre-commit in a GitOps checkout): ``desched lint`` of one kustomization of that tree,
   its root holding ``.git``, which desched judges in the deploy unit that holds it (the shared ``apps/`` base)
   where a revision before deploy units reads the file alone: the price of one verdict per object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import POLICY, write_gitops_tree, write_tree  # noqa: E402
from lint import Tool, _pinned, alternate, check  # noqa: E402
from peers import ENV  # noqa: E402


def install(source: str, target: str) -> str:
    """desched from the source tree ``source`` installed (no dependencies) under ``target``, which is returned: the
    directory to put on PYTHONPATH."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--target", target,
         source],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return target


def install_revision(rev: str, into: str) -> str:
    """desched at ``rev`` installed under ``into``, as :func:`install` does."""
    tree = os.path.join(into, "tree")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", tree, rev], check=True)
    try:
        return install(tree, os.path.join(into, "revision"))
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], check=False)


def _pair(label: str, arguments: list[str], sites: tuple[str, str], pinned: bool, expect: str) -> list[Tool]:
    command = [sys.executable, "-m", "desched", "lint", *arguments]
    command = _pinned(command) if pinned else command
    now, baseline = sites
    return [
        Tool("now", f"{label}, this checkout", command, expect=expect, env={**ENV, "PYTHONPATH": now}),
        Tool("baseline", f"{label}, the revision", command, expect=expect, env={**ENV, "PYTHONPATH": baseline}),
    ]


def case(
    label: str, arguments: list[str], cwd: str, sites: tuple[str, str], runs: int, pinned: bool, expect: str
) -> Any:
    """One case: medians in seconds of both, and the ratio now / baseline (min, median and max over the pairs)."""
    tools = _pair(label, arguments, sites, pinned, expect)
    for tool in tools:  # also the warm-up
        check(tool, cwd)
    times = alternate(tools, {"now": runs, "baseline": runs}, cwd)
    pairs = sorted(now / old for now, old in zip(times["now"], times["baseline"], strict=True))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["now"] / medians["baseline"]
    print(
        f"  {label:<44} now {medians['now'] * 1000:8.1f} ms   revision {medians['baseline'] * 1000:8.1f} ms   "
        f"now/revision {ratio:.3f} (pairs {pairs[0]:.3f} to {pairs[-1]:.3f})",
        flush=True,
    )
    return {"runs": runs, "seconds": medians, "ratio": ratio, "pair_range": [pairs[0], pairs[-1]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare with (for example main's)")
    parser.add_argument("--runs", type=int, default=21, help="runs of each side per case (default 21)")
    parser.add_argument("--files", type=int, default=2000, help="files in the repository case (default 2000)")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH as JSON")
    args = parser.parse_args()
    revision = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", args.rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    results: dict[str, Any] = {"revision": revision}
    with tempfile.TemporaryDirectory() as work:
        baseline = (install(ROOT, os.path.join(work, "now")), install_revision(args.rev, work))
        print(f"this checkout against {revision}, whole processes, alternated; medians of {args.runs} runs each")
        single = os.path.join(work, "single")
        os.makedirs(single)
        with open(os.path.join(single, "policy.yaml"), "w", encoding="utf-8") as handle:
            handle.write(POLICY.format(n=1, limit=5, low=20, high=50, restarts=100, lifetime=86400))
        results["single_file"] = case(
            "one policy file", ["policy.yaml"], single, baseline, args.runs, False, r"\bin 1 file\b"
        )
        repository = os.path.join(work, "repository")
        write_tree(repository, args.files)
        results["repository"] = case(
            f"repository, {args.files:,} files, one core", ["--format", "json", "."], repository, baseline,
            max(5, args.runs // 2), True, rf'"files": {args.files}\b',
        )  # fmt: skip
        gitops = os.path.join(work, "gitops")
        write_gitops_tree(gitops, 200)
        files = sum(len([name for name in names if name.endswith(".yaml")]) for _, _, names in os.walk(gitops))
        results["gitops"] = case(
            f"GitOps, {files} files, one core", ["--format", "json", "."], gitops, baseline, max(5, args.runs // 2),
            True, rf'"files": {files}\b',
        )  # fmt: skip
        results["gitops"]["files"] = files
        os.makedirs(os.path.join(gitops, ".git"))  # a checkout: a file given alone is judged in its deploy units
        results["file_in_repository"] = case(
            "one kustomization of the GitOps tree, in its repository", [os.path.join("clusters", "cluster-2",
            "kustomization.yaml")], gitops, baseline, args.runs, False, r"\bin 1 file\b",
        )  # fmt: skip
        results["repository"]["files"] = args.files
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
