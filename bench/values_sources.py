"""Lint time against the number of values sources of one install (issue 38, item 1): linear, not cubic.

``python bench/values_sources.py [--counts 50,100,200,400,800] [--runs N] [--json PATH]``. For each count and each
shape of bench/corpus.py :func:`write_values_sources` (``helmCharts``: a kustomize entry with that many
``additionalValuesFiles``; ``valuesFrom``: a HelmRelease with that many ConfigMaps), one ``lint_paths`` call in
process (start-up excluded: it would hide the growth at small counts), the median over ``--runs`` after one untimed
run. Printed: seconds, milliseconds per source, and that figure over the smallest count's (``growth``): about 1 when
the cost is linear, rising with the count when it is not (the count itself when it grows with its square). Figures
only: nothing is asserted (tests/linter/test_values_sources_scale.py holds the one bound).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from corpus import VALUES_SHAPES, write_values_sources  # noqa: E402

from desched.linter.lint import lint_paths  # noqa: E402


def seconds(root: str, runs: int) -> float:
    """The median seconds of ``lint_paths([root])`` over ``runs``, after one untimed run."""
    lint_paths([root])
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        lint_paths([root])
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--counts", default="50,100,200,400,800", help="values sources per install, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    counts = sorted(int(count) for count in args.counts.split(","))
    rows = []
    print(f"{'shape':<11} {'sources':>7} {'seconds':>8} {'ms/source':>9} {'growth':>6}")
    with tempfile.TemporaryDirectory(prefix="desched-values-") as scratch:
        for shape in VALUES_SHAPES:
            first = None
            for count in counts:
                root = os.path.join(scratch, f"{shape}-{count}")
                write_values_sources(root, count, shape)
                taken = seconds(root, args.runs)
                per_source = taken / count
                first = per_source if first is None else first
                rows.append({"shape": shape, "sources": count, "seconds": taken, "per_source": per_source})
                print(f"{shape:<11} {count:>7} {taken:>8.3f} {per_source * 1000:>9.2f} {per_source / first:>6.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
