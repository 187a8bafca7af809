"""Migration benchmark (issue 3): 1,000 v1alpha1 policy files migrated in under 5 seconds on one core.

Generates 1,000 commented v1alpha1 policies, deterministically: half raw policy files, a quarter ConfigMaps holding
the policy in a ``|`` block scalar next to a Deployment, a quarter Helm chart values. Then times, as whole
processes pinned to one core (``taskset -c 0`` when available), with bytecode compiled beforehand:

1. ``desched migrate --check DIR`` (CI: reads, converts and rewrites every file in memory, writes nothing);
2. ``desched migrate --in-place DIR`` on a fresh copy each run (also writes every file, atomically, with fsync).

Prints the median of several runs and whether the target (< 5 s) is met. Run with ``python bench/migrate.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET_SECONDS = 5.0

_STRATEGIES = {
    "RemoveDuplicates": """\
  # keep one replica per node
  RemoveDuplicates:
    enabled: true
    weight: {weight}
    params:
      removeDuplicates:
        excludeOwnerKinds: [Job]
      namespaces:
        exclude: [kube-system, team-{n}]
""",
    "LowNodeUtilization": """\
  LowNodeUtilization:
    enabled: true
    params:
      nodeResourceUtilizationThresholds:
        thresholds:          # under-used below this
          cpu: {low}
          memory: {low}
          pods: {low}
        targetThresholds:
          cpu: {high}
          memory: {high}
          pods: {high}
""",
    "RemovePodsHavingTooManyRestarts": """\
  RemovePodsHavingTooManyRestarts:
    enabled: true
    params:
      podsHavingTooManyRestarts:
        podRestartThreshold: {restarts}
        includingInitContainers: true
      thresholdPriorityClassName: system-cluster-critical
""",
    "PodLifeTime": """\
  # recycle long-running pods
  PodLifeTime:
    enabled: true
    params:
      podLifeTime:
        maxPodLifeTimeSeconds: {lifetime}  # seconds
        states: [Pending, PodInitializing]
      labelSelector:
        matchLabels: {{tier: batch-{n}}}
""",
    "RemovePodsViolatingNodeTaints": """\
  RemovePodsViolatingNodeTaints:
    enabled: true
    params:
      excludedTaints:
        - dedicated=team-{n}
      nodeFit: true
""",
    "RemovePodsViolatingTopologySpreadConstraint": """\
  RemovePodsViolatingTopologySpreadConstraint:
    enabled: {soft}
    params:
      includeSoftConstraints: {soft}
""",
}


def _policy(rng: random.Random, n: int) -> str:
    names = sorted(rng.sample(sorted(_STRATEGIES), rng.randint(2, 5)))
    values = {
        "n": n,
        "weight": rng.randint(1, 9),
        "low": rng.choice((10, 20, 30)),
        "high": rng.choice((50, 60, 70)),
        "restarts": rng.choice((10, 50, 100)),
        "lifetime": rng.choice((3600, 86400, 604800)),
        "soft": rng.choice(("true", "false")),
    }
    head = "# descheduler policy {n}\napiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\n"
    flags = "evictLocalStoragePods: true   # cache pods are fine to move\n" if rng.random() < 0.5 else ""
    limits = f"maxNoOfPodsToEvictPerNode: {rng.randint(1, 20)}\n"
    body = "strategies:\n" + "".join(_STRATEGIES[name].format(**values) for name in names)
    return head.format(n=n) + limits + flags + body


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(keepends=True))


def write_corpus(root: str, count: int, seed: int = 3) -> None:
    """``count`` v1alpha1 files under ``root``: raw policies, ConfigMaps (with a Deployment) and Helm values."""
    rng = random.Random(seed)
    for n in range(count):
        folder = os.path.join(root, f"team-{n % 10}")
        os.makedirs(folder, exist_ok=True)
        policy = _policy(rng, n)
        kind = n % 4
        if kind in (0, 1):
            name, text = f"policy-{n}.yaml", policy
        elif kind == 2:
            name = f"configmap-{n}.yaml"
            text = (
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: descheduler-{n}\n  namespace: kube-system\n"
                f"data:\n  policy.yaml: |\n{_indent(policy, 4)}---\napiVersion: apps/v1\nkind: Deployment\n"
                f"metadata:\n  name: app-{n}\nspec:\n  replicas: 3\n"
            )
        else:
            name = f"values-{n}.yaml"
            lines = policy.splitlines(keepends=True)[3:]  # no comment header, apiVersion or kind
            text = (
                "# descheduler chart values\nschedule: '*/2 * * * *'\n"
                "deschedulerPolicyAPIVersion: descheduler/v1alpha1\n"
                f"deschedulerPolicy:\n{_indent(''.join(lines), 2)}resources:\n  requests: {{cpu: 500m}}\n"
            )
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)


_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _pinned(command: list[str]) -> list[str]:
    return ["taskset", "-c", "0", *command] if shutil.which("taskset") else command


def _run(args: list[str], expect: int) -> float:
    command = _pinned([sys.executable, "-m", "desched", "migrate", "--quiet", *args])
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != expect:
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}, expected {expect}:\n{proc.stderr.decode()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000, help="policy files to migrate (default 1000)")
    parser.add_argument("--runs", type=int, default=5, help="measurements per command (default 5)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cpus, python {platform.python_version()}")
    for folder in ("kernel", "linter"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, folder)], check=True, env=_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        write_corpus(corpus, args.files)
        _run(["--check", corpus], 1)  # warm the page cache
        checks = [_run(["--check", corpus], 1) for _ in range(args.runs)]
        writes = []
        for run in range(args.runs):
            copy = os.path.join(tmp, f"copy-{run}")
            shutil.copytree(corpus, copy)
            if hasattr(os, "sync"):
                os.sync()  # flush the copy now, so that the timed fsyncs do not pay for it
            writes.append(_run(["--in-place", copy], 0))
            _run(["--check", copy], 0)  # the migrated tree has nothing left to migrate
    targets = {}
    print(f"{args.files} v1alpha1 files, one process, one core, median of {args.runs}")
    for label, times in (("migrate --check DIR", checks), ("migrate --in-place DIR", writes)):
        median = statistics.median(times)
        met = median < TARGET_SECONDS * args.files / 1000
        text = (
            f"{label:24} median {median:6.2f} s  ({args.files / median:,.0f} files/s)  "
            f"target < {TARGET_SECONDS * args.files / 1000:.1f} s"
        )
        targets[label] = {"seconds": median, "files_per_second": args.files / median, "text": text.strip(), "met": met}
        print(f"  {text}: {'met' if met else 'MISSED'}")
    ok = all(target["met"] for target in targets.values())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
                    "files": args.files,
                    "runs": args.runs,
                    "targets": targets,
                },
                handle,
                indent=2,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
