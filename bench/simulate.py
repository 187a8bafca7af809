"""``desched simulate`` at scale (issue 7): 300 / 1,000 / 3,000 nodes with 30 pods per node.

Each size is generated (``bench/clusters.py``), written as a JSON snapshot (``kubectl get -o json`` form) and run as a
whole ``desched simulate`` process, three times, with every plugin but HighNodeUtilization (the linter forbids it
beside LowNodeUtilization), then once more with HighNodeUtilization alone. Prints the median seconds, the peak RSS,
and the growth exponent ``log(t_3000 / t_300) / log(10)`` (target <= 1.2: no quadratic plugin). Target: 1,000 nodes
/ 30,000 pods under 10 s and 1.5 GB. Run with ``python bench/simulate.py`` (``--sizes``/``--runs`` to change).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.clusters import generate  # noqa: E402

PODS_PER_NODE = 30
TARGET_SECONDS, TARGET_BYTES, TARGET_EXPONENT = 10.0, 1.5 * 2**30, 1.2
ALL_BUT_HNU = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: all
  pluginConfig:
  - name: DefaultEvictor
    args: {evictLocalStoragePods: true}
  - name: RemovePodsViolatingNodeTaints
  - name: RemovePodsViolatingNodeAffinity
    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}
  - name: RemovePodsViolatingInterPodAntiAffinity
  - name: RemovePodsHavingTooManyRestarts
    args: {podRestartThreshold: 10}
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 604800}
  - name: RemoveFailedPods
  - name: RemoveDuplicates
  - name: RemovePodsViolatingTopologySpreadConstraint
  - name: LowNodeUtilization
    args: {thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 50, memory: 50, pods: 50}}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints, RemovePodsViolatingNodeAffinity,
                RemovePodsViolatingInterPodAntiAffinity, RemovePodsHavingTooManyRestarts, PodLifeTime,
                RemoveFailedPods]
    balance:
      enabled: [RemoveDuplicates, RemovePodsViolatingTopologySpreadConstraint, LowNodeUtilization]
"""
HNU_ONLY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: compact
  pluginConfig:
  - name: HighNodeUtilization
    args: {thresholds: {cpu: 40, memory: 40, pods: 40}}
  plugins:
    balance:
      enabled: [HighNodeUtilization]
"""
# Peak RSS of the child, read by the child itself just before it exits.
RUNNER = """
import resource, sys
from desched.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, file=sys.stderr)
sys.exit(code)
"""


def _run(policy: str, snapshot: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUNNER,
            "simulate",
            "--policy",
            policy,
            "--cluster",
            snapshot,
            "--format",
            "json",
            "--now",
            "2026-11-22T00:00:00Z",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"simulate failed:\n{done.stderr}")
    evicted = json.loads(done.stdout)["summary"]["evicted"]
    return elapsed, int(done.stderr.strip().splitlines()[-1]), evicted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,1000,3000", help="node counts (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        policies = {}
        for name, text in (("all-but-hnu", ALL_BUT_HNU), ("hnu", HNU_ONLY)):
            policies[name] = os.path.join(work, f"{name}.yaml")
            with open(policies[name], "w", encoding="utf-8") as handle:
                handle.write(text)
        for nodes in sizes:
            snapshot = os.path.join(work, f"cluster-{nodes}.json")
            with open(snapshot, "w", encoding="utf-8") as handle:
                json.dump({"apiVersion": "v1", "kind": "List", "items": generate(nodes, PODS_PER_NODE)}, handle)
            for name, policy in policies.items():
                runs = [_run(policy, snapshot) for _ in range(args.runs if name == "all-but-hnu" else 1)]
                rows.append((name, nodes, statistics.median(r[0] for r in runs), max(r[1] for r in runs), runs[0][2]))
            os.unlink(snapshot)
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; medians of {args.runs} runs")
    print(f"{'policy':<12} {'nodes':>6} {'pods':>7} {'seconds':>8} {'peak MB':>8} {'evicted':>8}")
    for name, nodes, seconds, peak, evicted in rows:
        print(f"{name:<12} {nodes:>6} {nodes * PODS_PER_NODE:>7} {seconds:>8.2f} {peak / 2**20:>8.0f} {evicted:>8}")
    main_rows = {nodes: (seconds, peak) for name, nodes, seconds, peak, _ in rows if name == "all-but-hnu"}
    targets = {}
    if 1000 in main_rows:
        seconds, peak = main_rows[1000]
        targets["1000 nodes"] = {
            "text": f"1,000 nodes: {seconds:.2f} s (target < {TARGET_SECONDS:.0f}), "
            f"{peak / 2**30:.2f} GB (target < 1.5)",
            "met": seconds < TARGET_SECONDS and peak < TARGET_BYTES,
        }
    if len(main_rows) >= 2:
        low, high = min(main_rows), max(main_rows)
        exponent = math.log(main_rows[high][0] / main_rows[low][0]) / math.log(high / low)
        targets["growth"] = {
            "value": exponent,
            "text": f"growth exponent {low}->{high} nodes: {exponent:.2f} (target <= {TARGET_EXPONENT})",
            "met": exponent <= TARGET_EXPONENT,
        }
    for target in targets.values():
        print(target["text"])
    verdicts = [target["met"] for target in targets.values()]
    print("targets: " + ("met" if all(verdicts) else "MISSED"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
                    "runs": args.runs,
                    "rows": [
                        {
                            "policy": name,
                            "nodes": nodes,
                            "pods": nodes * PODS_PER_NODE,
                            "seconds": seconds,
                            "peak_bytes": peak,
                            "evicted": evicted,
                        }
                        for name, nodes, seconds, peak, evicted in rows
                    ],
                    "targets": targets,
                },
                handle,
                indent=2,
            )
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
