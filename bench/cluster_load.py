"""Loading a snapshot into the real test API server (issue 6): 200 nodes and 5,000 pods in under 60 seconds.

Starts a fresh control plane (``scripts/control-plane install`` must have run), loads the generated snapshot with the
concurrent loader, and, as the baseline measured in the same run, loads a tenth of another snapshot one object at a
time. Prints seconds, objects per second and the concurrency speed-up. Run with ``python bench/cluster_load.py``
(``--nodes``/``--pods-per-node`` to resize, ``--workers`` for the pool).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.clusters import generate  # noqa: E402
from tests.kcp import controlplane, install  # noqa: E402
from tests.kcp.kubelet import FakeKubelet  # noqa: E402
from tests.kcp.snapshot import LoadReport, isolate, load  # noqa: E402

TARGET_SECONDS = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--pods-per-node", type=int, default=25)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    found = install.find()
    if found is None:
        print("the control plane is not installed: run scripts/control-plane install", file=sys.stderr)
        return 1
    started = time.perf_counter()
    plane = controlplane.up(found, tied_to_parent=True)
    startup = time.perf_counter() - started
    try:
        api = plane.api(pool_size=args.workers)
        kubelet = FakeKubelet(api)
        kubelet.start()
        try:
            full = load(api, kubelet, generate(args.nodes, args.pods_per_node), workers=args.workers)
            tenth = isolate(generate(max(1, args.nodes // 10), args.pods_per_node, seed=2), "-baseline")
            sequential = load(api, kubelet, tenth, workers=1)
        finally:
            kubelet.stop()
    finally:
        plane.stop()
    _print(args, startup, full, sequential)
    return 0 if full.seconds < TARGET_SECONDS else 1


def _print(args: argparse.Namespace, startup: float, full: LoadReport, sequential: LoadReport) -> None:
    def rate(report: LoadReport) -> float:
        return sum(report.created.values()) / report.seconds

    pods = full.created["Pod"]
    print(f"machine: {os.cpu_count()} CPUs; control plane up in {startup:.1f} s")
    print(f"{'case':<44} {'objects':>8} {'seconds':>8} {'objects/s':>10}")
    print(
        f"{f'{args.nodes} nodes, {pods} pods, {args.workers} workers':<44} {sum(full.created.values()):>8} "
        f"{full.seconds:>8.1f} {rate(full):>10.0f}"
    )
    print(
        f"{'baseline: a tenth, one object at a time':<44} {sum(sequential.created.values()):>8} "
        f"{sequential.seconds:>8.1f} {rate(sequential):>10.0f}"
    )
    print(
        f"concurrency speed-up: {rate(full) / rate(sequential):.1f}x; "
        f"target: under {TARGET_SECONDS:.0f} s -> {'met' if full.seconds < TARGET_SECONDS else 'MISSED'}"
    )


if __name__ == "__main__":
    sys.exit(main())
