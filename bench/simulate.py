"""``desched simulate`` at scale: 300 / 1,000 / 3,000 / 5,000 nodes with 30 pods per node, DefaultEvictor's
``nodeFit`` on and off, on two shapes of cluster.

Each size is generated (``bench/clusters.py``): a packed cluster, where one application in twenty runs pods as big as
a node, which fit nowhere else (the hard case for ``nodeFit``); and, from 1,000 nodes, a cluster in node pools
(labels, tainted pools, applications pinned by selectors, affinity and tolerations: rows ``pools-...``). Each is
written as a JSON snapshot (``kubectl get -o json`` form) and run as a whole ``desched simulate`` process with every
plugin but HighNodeUtilization (the linter forbids it beside LowNodeUtilization), with ``nodeFit: true`` and without,
then (packed) once with HighNodeUtilization alone. Prints the median seconds (``--runs`` runs up to 1,000 nodes, two
above), the peak RSS and the peak RSS per snapshot byte (``MB/MB``: what a snapshot costs in memory, the basis of
the snapshot limit; in the JSON as ``peak_per_snapshot_byte``), and per shape the growth exponent
``log(t_5000 / t_1000) / log(5)`` (the smallest and largest sizes when those are not measured).

The reference (rows ``json-load``, ``pools-json-load``): in the same run, a whole process that does nothing but the
standard library's ``json.load`` of the same snapshot file, at 5,000 nodes and at the largest size measured. Target
(issue 39), with nodeFit on, on both shapes: desched simulate takes at most 2x the reference's time, and its peak RSS
is at most the reference's (1.0x). Older targets, still reported: 5,000 nodes / 150,000 pods at most 20 s and
1.5 GB; a growth exponent of at most 1.2; and 1,000 packed nodes under 10 s.

The forecast (``simulate --samples 20``, nodeFit on) runs at the ``--sample-sizes`` (300 and 1,000 nodes), with the
default ``--jobs`` (the usable CPUs) and with ``--jobs 1``, against the time of 20 separate runs (20 times the median
single run of the same size, measured in the same run). Target: with the default jobs, at most half that time. Run
with ``python bench/simulate.py`` (``--sizes``/``--runs``/``--sample-sizes`` to change).

``--memory`` measures instead what a snapshot costs in memory (the basis of the snapshot limit,
desched.executor.snapshot): the peak RSS of a whole ``desched simulate`` process (nodeFit off) on JSON snapshots of
the ``--memory-sizes`` nodes, printed per snapshot MiB, whole (the interpreter included) and from one size to the
next (the cost of one more snapshot MiB).
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
TARGET_EXPONENT = 1.2
#: (shape prefix, nodes) -> (seconds, bytes) that the run with nodeFit on must stay within
TARGETS = {("", 1000): (10.0, None), ("", 5000): (20.0, 1.5 * 2**30), ("pools-", 5000): (20.0, 1.5 * 2**30)}
SHAPES = ("", "pools-")  # row name prefixes: packed, pools
#: desched simulate (nodeFit on) against a process that only does json.load of the same snapshot: time, peak RSS
TARGET_REFERENCE = (2.0, 1.0)
REFERENCE_NODES = 5000  # the reference runs at this size and at the largest size measured
SAMPLES = 20
#: the forecast over SAMPLES orders, default --jobs, against SAMPLES separate runs: at most this share of their time
TARGET_SAMPLES_SHARE = 0.5
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
NODE_FIT = ALL_BUT_HNU.replace("{evictLocalStoragePods: true}", "{evictLocalStoragePods: true, nodeFit: true}")
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
# Peak RSS of the child, read by the child itself just before it exits: VmHWM, the high-water mark of its own
# memory since exec (ru_maxrss of a process spawned by vfork starts at its parent's peak, this script's with the
# generated cluster), and the peak of its --samples workers.
PEAK = """
import resource
def peak():
    with open("/proc/self/status", encoding="ascii") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
"""
RUNNER = (
    PEAK
    + """
import sys
from desched.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(peak(), file=sys.stderr)
sys.exit(code)
"""
)

# The reference: the standard library's json.load of the snapshot, peak RSS read the same way.
REFERENCE = (
    PEAK
    + """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    json.load(handle)
print(peak(), file=sys.stderr)
"""
)


def _reference(snapshot: str) -> tuple[float, int]:
    """Seconds and peak RSS of a whole process doing only ``json.load`` of ``snapshot``."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", REFERENCE, snapshot], capture_output=True, text=True, check=True)
    return time.perf_counter() - started, int(done.stderr.strip().splitlines()[-1])


def _run(policy: str, snapshot: str, *options: str) -> tuple[float, int, int]:
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
            *options,
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
    parser.add_argument("--sizes", default="300,1000,3000,5000", help="node counts (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="runs per size up to 1,000 nodes (two above)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--sample-sizes", default="300,1000", help="sizes of the --samples runs (default: %(default)s)")
    parser.add_argument("--memory", action="store_true", help="measure peak memory per snapshot MiB instead")
    parser.add_argument("--memory-sizes", default="100,300,1000", help="sizes of --memory (default: %(default)s)")
    args = parser.parse_args()
    if args.memory:
        memory([int(size) for size in args.memory_sizes.split(",")])
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    sample_sizes = {int(size) for size in args.sample_sizes.split(",") if size}
    rows: list[tuple[str, int, float, int, int | None]] = []
    sizes_of: list[int] = []  # the snapshot bytes of each row, for its memory per snapshot MiB
    with tempfile.TemporaryDirectory() as work:
        policies = {}
        for name, text in (("nodefit-on", NODE_FIT), ("nodefit-off", ALL_BUT_HNU), ("hnu", HNU_ONLY)):
            policies[name] = os.path.join(work, f"{name}.yaml")
            with open(policies[name], "w", encoding="utf-8") as handle:
                handle.write(text)
        for nodes in sizes:
            for shape in SHAPES if nodes >= 1000 else SHAPES[:1]:
                snapshot = os.path.join(work, f"cluster-{shape}{nodes}.json")
                with open(snapshot, "w", encoding="utf-8") as handle:
                    objects = generate(nodes, PODS_PER_NODE, pools=bool(shape))
                    json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, handle)
                snapshot_bytes = os.path.getsize(snapshot)
                for name, policy in policies.items():
                    if shape and name == "hnu":
                        continue
                    count = 1 if name == "hnu" else (args.runs if nodes <= 1000 else min(args.runs, 2))
                    runs = [_run(policy, snapshot) for _ in range(count)]
                    seconds, peak = statistics.median(r[0] for r in runs), max(r[1] for r in runs)
                    rows.append((shape + name, nodes, seconds, peak, runs[0][2]))
                    sizes_of.append(snapshot_bytes)
                    print(f"  {shape}{name} {nodes} nodes: {seconds:.2f} s", file=sys.stderr, flush=True)
                if nodes in (REFERENCE_NODES, max(sizes)):
                    loads = [_reference(snapshot) for _ in range(min(args.runs, 2))]
                    seconds, peak = statistics.median(r[0] for r in loads), max(r[1] for r in loads)
                    rows.append((f"{shape}json-load", nodes, seconds, peak, None))
                    sizes_of.append(snapshot_bytes)
                    print(f"  {shape}json-load {nodes} nodes: {seconds:.2f} s", file=sys.stderr, flush=True)
                if shape:
                    os.unlink(snapshot)
            snapshot = os.path.join(work, f"cluster-{nodes}.json")
            if nodes in sample_sizes:
                for name, options in ((f"samples-{SAMPLES}", ()), (f"samples-{SAMPLES}-jobs-1", ("--jobs", "1"))):
                    sampled = _run(policies["nodefit-on"], snapshot, "--samples", str(SAMPLES), *options)
                    rows.append((name, nodes, *sampled))
                    seconds = sampled[0]
                    sizes_of.append(os.path.getsize(snapshot))
                    print(f"  {name} {nodes} nodes: {seconds:.2f} s", file=sys.stderr, flush=True)
            os.unlink(snapshot)
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; medians of {args.runs} runs (samples: 1)")
    print(f"{'policy':<12} {'nodes':>6} {'pods':>7} {'seconds':>8} {'peak MB':>8} {'MB/MB':>6} {'evicted':>8}")
    for (name, nodes, seconds, peak, evicted), size in zip(rows, sizes_of, strict=True):
        ratio = peak / size  # peak memory per snapshot byte: what the snapshot limit costs at most
        print(f"{name:<12} {nodes:>6} {nodes * PODS_PER_NODE:>7} {seconds:>8.2f} {peak / 2**20:>8.0f} {ratio:>6.1f} "
              f"{'-' if evicted is None else evicted:>8}")  # fmt: skip
    targets = _targets(rows)
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
                            "snapshot_bytes": size,
                            "peak_per_snapshot_byte": peak / size,
                            "evicted": evicted,
                        }
                        for (name, nodes, seconds, peak, evicted), size in zip(rows, sizes_of, strict=True)
                    ],
                    "targets": targets,
                },
                handle,
                indent=2,
            )
    return 0 if all(verdicts) else 1


def memory(sizes: list[int]) -> None:
    """Print the peak RSS of ``desched simulate`` per snapshot MiB at each of ``sizes`` nodes (see the module doc)."""
    print(f"{'nodes':>6} {'pods':>7} {'snapshot MiB':>12} {'peak MiB':>9} {'per MiB':>8} {'marginal':>9}")
    last: tuple[float, float] | None = None
    with tempfile.TemporaryDirectory() as work:
        policy = os.path.join(work, "policy.yaml")
        with open(policy, "w", encoding="utf-8") as handle:
            handle.write(ALL_BUT_HNU)
        for nodes in sizes:
            snapshot = os.path.join(work, f"cluster-{nodes}.json")
            with open(snapshot, "w", encoding="utf-8") as handle:
                json.dump({"apiVersion": "v1", "kind": "List", "items": generate(nodes, PODS_PER_NODE)}, handle)
            size = os.path.getsize(snapshot) / 2**20
            peak = _run(policy, snapshot)[1] / 2**20
            marginal = f"{(peak - last[1]) / (size - last[0]):>9.1f}" if last else f"{'-':>9}"
            print(f"{nodes:>6} {nodes * PODS_PER_NODE:>7} {size:>12.1f} {peak:>9.0f} {peak / size:>8.1f} {marginal}")
            last = (size, peak)
            os.unlink(snapshot)


def _targets(rows: list[tuple[str, int, float, int, int | None]]) -> dict[str, dict[str, object]]:
    """The size targets of the nodeFit-on runs, their ratios to the json.load reference, and the growth exponent of
    each policy (nodeFit on is the target)."""
    targets = _reference_targets(rows)
    on = {nodes: (seconds, peak) for name, nodes, seconds, peak, _ in rows if name == "nodefit-on"}
    for name, nodes, seconds, _, _ in rows:
        if name.startswith("samples-") and nodes in on:
            share = seconds / (SAMPLES * on[nodes][0])
            default_jobs = name == f"samples-{SAMPLES}"
            text = f"{nodes:,} nodes, {name}: {share:.2f} of {SAMPLES} separate runs' time"
            targets[f"{name} {nodes}"] = {
                "value": share,
                "text": text + (f" (target <= {TARGET_SAMPLES_SHARE})" if default_jobs else ""),
                "met": share <= TARGET_SAMPLES_SHARE or not default_jobs,
            }
    for (shape, nodes), (limit, memory) in TARGETS.items():
        found = {size: (seconds, peak) for name, size, seconds, peak, _ in rows if name == f"{shape}nodefit-on"}
        if nodes not in found:
            continue
        seconds, peak = found[nodes]
        text = f"{nodes:,} {'pooled' if shape else 'packed'} nodes, nodeFit on: {seconds:.2f} s (target <= {limit:.0f})"
        met = seconds <= limit
        if memory is not None:
            text += f", {peak / 2**30:.2f} GB (target <= {memory / 2**30:.1f})"
            met = met and peak <= memory
        targets[f"{shape.replace('-', ' ')}{nodes} nodes"] = {"text": text, "met": met}
    for shape in SHAPES:
        for name in ("nodefit-on", "nodefit-off"):
            times = {nodes: seconds for policy, nodes, seconds, _, _ in rows if policy == shape + name}
            if len(times) < 2:
                continue
            low, high = (1000, 5000) if {1000, 5000} <= set(times) else (min(times), max(times))
            exponent = math.log(times[high] / times[low]) / math.log(high / low)
            key = shape.replace("-", " ") + ("growth" if name == "nodefit-on" else "growth nodeFit off")
            text = f"growth exponent {low}->{high} nodes, {shape}{name}: {exponent:.2f}"
            targets[key] = {
                "value": exponent,
                "text": text + (f" (target <= {TARGET_EXPONENT})" if name == "nodefit-on" else ""),
                "met": exponent <= TARGET_EXPONENT or name != "nodefit-on",
            }
    return targets


def _reference_targets(rows: list[tuple[str, int, float, int, int | None]]) -> dict[str, dict[str, object]]:
    """Per shape and size with a reference row: the nodeFit-on run's time and peak as multiples of the reference's
    (``value``: the time ratio, ``memory``: the peak ratio), against :data:`TARGET_REFERENCE`."""
    measured = {(name, nodes): (seconds, peak) for name, nodes, seconds, peak, _ in rows}
    targets: dict[str, dict[str, object]] = {}
    for shape in SHAPES:
        for (name, nodes), (load_seconds, load_peak) in measured.items():
            ours = measured.get((f"{shape}nodefit-on", nodes))
            if name != f"{shape}json-load" or ours is None:
                continue
            time_ratio, memory_ratio = ours[0] / load_seconds, ours[1] / load_peak
            limit_time, limit_memory = TARGET_REFERENCE
            text = (
                f"{nodes:,} {'pooled' if shape else 'packed'} nodes, nodeFit on, against json.load of the snapshot "
                f"({load_seconds:.2f} s, {load_peak / 2**20:,.0f} MB): {time_ratio:.2f}x the time (target <= "
                f"{limit_time:.0f}), {memory_ratio:.2f}x the peak (target <= {limit_memory:.1f})"
            )
            met = time_ratio <= limit_time and memory_ratio <= limit_memory
            key = f"{shape.replace('-', ' ')}{nodes} nodes against json.load"
            targets[key] = {"value": time_ratio, "memory": memory_ratio, "text": text, "met": met}
    return targets


if __name__ == "__main__":
    sys.exit(main())
