"""desched.policy.effective resolves its derivers by name: a library caller needs no import order.

The KubeDescheduler renderer and the v1alpha1 converter are reached through a ``module:function`` table, so
``effective_policy`` works in a fresh interpreter that imports neither the linter nor ``desched.openshift``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from desched.policy import effective

ROOT = Path(__file__).resolve().parents[3]
KUBE_DESCHEDULER = ROOT / "tests" / "kernel" / "openshift" / "golden" / "example1.input.yaml"

FRESH = """
import json, sys
from desched.gitops.documents import extract
from desched.policy.effective import effective_policy
path, target = sys.argv[1], int(sys.argv[2])
doc = extract(path, open(path, encoding="utf-8").read()).policies[0]
before = {name for name in sys.modules if name.startswith("desched.")}
found = effective_policy(doc, target)
print(json.dumps({
    "derivation": found.derivation,
    "profiles": [profile["name"] for profile in found.tree["profiles"]],
    "linter_before": sorted(name for name in before if name.startswith(("desched.linter", "desched.openshift"))),
}))
"""

V1ALPHA1 = """\
apiVersion: descheduler/v1alpha1
kind: DeschedulerPolicy
strategies:
  RemoveDuplicates:
    enabled: true
"""


def _fresh(path: Path, target: int = 36) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", FRESH, str(path), str(target)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_kubedescheduler_renders_in_a_fresh_interpreter_without_the_linter():
    found = _fresh(KUBE_DESCHEDULER)
    assert found["linter_before"] == [], "the probe must start with neither the linter nor desched.openshift loaded"
    assert found["derivation"] == "rendered"
    assert found["profiles"], "the operator's profiles render to at least one descheduler profile"


def test_a_v1alpha1_policy_converts_in_a_fresh_interpreter(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(V1ALPHA1, encoding="utf-8")
    found = _fresh(path, target=30)
    assert found["derivation"] == "converted"
    assert found["profiles"]


@pytest.mark.parametrize("reference", [*effective.RENDERERS.values(), effective.CONVERTER])
def test_every_named_deriver_exists(reference: str):
    module, _, attribute = reference.partition(":")
    assert callable(getattr(import_module(module), attribute)), reference
