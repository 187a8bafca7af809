"""Lint cost grows linearly with an install's values sources (issue 38, item 1): the values documents are indexed
once per run, and an install's sources merged once for all of them, not rescanned for each.

The one timing bound of the unit tests: the whole ``lint_paths`` call on a kustomize ``helmCharts`` entry with 500
``additionalValuesFiles`` (and a HelmRelease with 500 ``valuesFrom`` ConfigMaps) within 5 s, where the rescans took
about 100 s. It runs in a subprocess with a timeout, so a regression fails the test rather than hanging the suite;
bench/values_sources.py prints the time per source over a range of counts.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOUND = 5.0  # seconds for the whole lint_paths call
SOURCES = 500

_SCRIPT = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("_desched_bench_corpus", sys.argv[1])
corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus)
corpus.write_values_sources(sys.argv[2], int(sys.argv[3]), sys.argv[4])
from desched.linter.lint import lint_paths
started = time.perf_counter()
run = lint_paths([sys.argv[2]])
elapsed = time.perf_counter() - started
print(elapsed, len(run.findings))
"""


@pytest.mark.parametrize("shape", ["helmCharts", "valuesFrom"])
def test_many_values_sources_lint_within_bound(tmp_path: object, shape: str) -> None:
    root = os.path.join(str(tmp_path), "repo")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, os.path.join(ROOT, "bench", "corpus.py"), root, str(SOURCES), shape],
            capture_output=True, text=True, timeout=BOUND * 6, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"linting {SOURCES} {shape} values sources took over {BOUND * 6:.0f} s (bound {BOUND:.0f} s)")
    elapsed, findings = done.stdout.split()
    assert float(elapsed) < BOUND, f"linting {SOURCES} {shape} values sources took {float(elapsed):.1f} s"
    assert int(findings) > 0  # the sources were linted, not skipped
