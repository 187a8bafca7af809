"""Eviction scope benchmark (issue 4, workload safety): collect + PDB matching + evaluate on one core.

Builds 10,000 workloads (Deployments, StatefulSets, Jobs, DaemonSets, bare Pods across 50 namespaces) and 2,000
PodDisruptionBudgets (matchLabels, matchLabels + expressions, expressions only, empty), then times
``collect`` + ``PDBIndex`` + matching every workload + ``evaluate`` under one policy with five evicting plugins. The
target is under 3 seconds. Run with ``python bench/workloads.py`` (``--workloads``/``--pdbs`` to resize).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from desched.policy.model import decode  # noqa: E402
from desched.workloads import PDBIndex, collect, evaluate  # noqa: E402

NAMESPACES = 50
KINDS = ("Deployment", "Deployment", "Deployment", "StatefulSet", "Job", "DaemonSet", "Pod")
TARGET_SECONDS = 3.0

POLICY: dict[str, Any] = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "default",
            "pluginConfig": [
                {
                    "name": "DefaultEvictor",
                    "args": {
                        "podProtections": {"extraEnabled": ["PodsWithoutPDB", "PodsWithPVC"]},
                        "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
                        "namespaceLabelSelector": {"matchLabels": {"descheduling": "on"}},
                        "minReplicas": 2,
                    },
                },
                {"name": "RemoveDuplicates", "args": {"namespaces": {"exclude": ["ns-0"]}}},
                {
                    "name": "LowNodeUtilization",
                    "args": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 60}},
                },
                {"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 86400, "ownerKinds": {"exclude": ["Job"]}}},
                {"name": "RemoveFailedPods", "args": {"excludeOwnerKinds": ["Job"]}},
                {"name": "RemovePodsViolatingNodeTaints", "args": {"labelSelector": {"matchLabels": {"tier": "web"}}}},
            ],
            "plugins": {
                "balance": {"enabled": ["RemoveDuplicates", "LowNodeUtilization"]},
                "deschedule": {"enabled": ["PodLifeTime", "RemoveFailedPods", "RemovePodsViolatingNodeTaints"]},
            },
        }
    ],
}


def _workload(index: int) -> dict[str, Any]:
    kind = KINDS[index % len(KINDS)]
    namespace = f"ns-{index % NAMESPACES}"
    labels = {"app": f"app-{index}", "tier": ("web", "api", "db")[index % 3], "team": f"team-{index % 17}"}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": f"registry/app:{index % 7}"}]}
    if index % 5 == 0:
        spec["volumes"] = [{"name": "cache", "emptyDir": {}}]
    template = {"metadata": {"labels": labels}, "spec": spec}
    meta = {"name": f"w-{index}", "namespace": namespace}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, "labels": labels}, "spec": spec}
    doc: dict[str, Any] = {"kind": kind, "metadata": meta, "spec": {"template": template}}
    if kind in ("Deployment", "StatefulSet"):
        doc["spec"]["replicas"] = 1 + index % 4
    return doc


def _pdb(index: int, workloads: int) -> dict[str, Any]:
    target = (index * 5) % workloads
    namespace = f"ns-{target % NAMESPACES}"
    shape = index % 20
    selector: dict[str, Any]
    if shape < 16:
        selector = {"matchLabels": {"app": f"app-{target}"}}
    elif shape < 18:
        selector = {"matchLabels": {"app": f"app-{target}", "tier": "web"}, "matchExpressions": [
            {"key": "team", "operator": "Exists"}]}  # fmt: skip
    elif shape == 18:
        selector = {"matchExpressions": [{"key": "team", "operator": "In", "values": [f"team-{index % 17}"]}]}
    else:
        selector = {}
    budget = {"maxUnavailable": 1} if index % 2 else {"minAvailable": "50%"}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"pdb-{index}", "namespace": namespace},
        "spec": {"selector": selector, **budget},
    }


def make_documents(workloads: int = 10_000, pdbs: int = 2_000) -> list[tuple[str, Any]]:
    """``(file, document)`` pairs: the workloads, the PDBs, and one Namespace per namespace."""
    docs: list[tuple[str, Any]] = [("workloads.yaml", _workload(i)) for i in range(workloads)]
    docs += [("pdbs.yaml", _pdb(i, workloads)) for i in range(pdbs)]
    for i in range(NAMESPACES):
        labels = {"descheduling": "on" if i % 10 else "off"}
        docs.append(("namespaces.yaml", {"kind": "Namespace", "metadata": {"name": f"ns-{i}", "labels": labels}}))
    return docs


def run(workloads: int, pdbs: int) -> tuple[float, int, int, int]:
    """Seconds for collect + index + matching + evaluate; plus workloads, matches and verdicts counted."""
    documents = make_documents(workloads, pdbs)
    start = time.perf_counter()
    inventory = collect(documents)
    index = PDBIndex(inventory.pdbs)
    matched = sum(len(index.matching(workload)) for workload in inventory.workloads)
    verdicts = evaluate(decode(POLICY), inventory, 36, index)
    return time.perf_counter() - start, len(inventory.workloads), matched, len(verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--pdbs", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs; the median is reported (default 5)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    options = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    results = [run(options.workloads, options.pdbs) for _ in range(options.repeat)]
    seconds = statistics.median(result[0] for result in results)
    _, count, matched, verdicts = results[0]
    met = seconds < TARGET_SECONDS
    print(f"workloads: {count}, PDBs: {options.pdbs}, PDB matches: {matched}, verdicts: {verdicts}")
    print(f"collect + PDB matching + evaluate: {seconds:.3f} s (median of {options.repeat}, one core)")
    print(f"target < {TARGET_SECONDS:g} s: {'met' if met else 'MISSED'}")
    if options.json:
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
                    "workloads": count,
                    "pdbs": options.pdbs,
                    "runs": options.repeat,
                    "seconds": seconds,
                    "targets": {
                        "workloads": {
                            "text": f"{count:,} workloads and {options.pdbs:,} PDBs in "
                            f"{seconds:.2f} s (target < {TARGET_SECONDS:g} s)",
                            "met": met,
                        }
                    },
                },
                handle,
                indent=2,
            )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
