"""The golden run: desched's whole output on every bundled input, byte for byte.

Lint JSON and SARIF over ``examples/`` and each folder of test fixtures, and ``desched simulate --format json`` on the
benchmark clusters (``bench/clusters.py``), are compared with the files under ``golden/``. A restructuring must leave
them identical; an intended change of output rewrites them with ``DESCHED_UPDATE_GOLDENS=1`` and shows in the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.clusters import generate
from bench.simulate import ALL_BUT_HNU, HNU_ONLY
from desched.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
LINTED = (
    "examples",
    "tests/fixtures",
    "tests/kernel/migrate/golden",
    "tests/kernel/migrate/tables",
    "tests/kernel/openshift/golden",
    "tests/kernel/schema/corpus",
    "tests/kernel/validation/tables",
    "tests/linter/golden",
    "tests/linter/scope/golden",
)
NODE_FIT = ALL_BUT_HNU.replace(
    "args: {evictLocalStoragePods: true}", "args: {evictLocalStoragePods: true, nodeFit: true}"
)
SIMULATED = {  # case: (policy, nodes, pods per node, node-sized pods, options)
    "all-300": (ALL_BUT_HNU, 300, 30, True, ("--dry-run",)),  # upstream's dry run: thousands of refusals less
    "hnu-100": (HNU_ONLY, 100, 8, False, ()),  # HighNodeUtilization needs underused nodes
    "nodefit-60": (NODE_FIT, 60, 30, True, ()),
}


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("DESCHED_UPDATE_GOLDENS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing {path}; run with DESCHED_UPDATE_GOLDENS=1 and review it"
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"


def _desched(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    main(list(argv))
    return capsys.readouterr().out


@pytest.mark.parametrize("folder", LINTED)
@pytest.mark.parametrize("output", ["json", "sarif"])
def test_lint_output_is_unchanged(folder: str, output: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    actual = _desched(capsys, "lint", "--exit-zero", "--no-config", "--format", output, folder)
    actual = actual.replace(ROOT.as_uri() + "/", "file:///CHECKOUT/")  # SARIF's originalUriBaseIds
    _check(f"lint/{folder.replace('/', '_')}.{output}", actual)


@pytest.mark.parametrize("case", sorted(SIMULATED))
def test_simulate_output_is_unchanged(case: str, capsys, tmp_path) -> None:
    policy, nodes, pods_per_node, node_sized, options = SIMULATED[case]
    assert policy.count("nodeFit") == (case == "nodefit-60")
    (tmp_path / "policy.yaml").write_text(policy)
    (tmp_path / "cluster.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": generate(nodes, pods_per_node, node_sized=node_sized)})
    )
    actual = _desched(
        capsys,
        "simulate",
        "--policy",
        str(tmp_path / "policy.yaml"),
        "--cluster",
        str(tmp_path / "cluster.json"),
        "--format",
        "json",
        "--now",
        "2026-11-22T00:00:00Z",
        *options,
    )
    assert json.loads(actual)["summary"]["evicted"] > 0
    _check(f"simulate/{case}.json", actual)
