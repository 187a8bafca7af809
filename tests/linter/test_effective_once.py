"""The effective policy (converted, rendered by the OpenShift operator or by the chart, or as written) is computed once
per policy and handed on: the rules on derived policies, the repository pass, ``desched scope`` and the executor all
read the engine's. Chart values are rendered once too."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from desched.deployment import chartrender
from desched.policy import effective
from desched.policy.effective import Effective
from tests.linter.test_chart_rendering import flux

V1ALPHA1 = """\
apiVersion: descheduler/v1alpha1
kind: DeschedulerPolicy
strategies:
  RemoveDuplicates:
    enabled: true
"""
V1ALPHA2 = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: default
  pluginConfig:
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 60}
  plugins:
    deschedule: {enabled: [PodLifeTime]}
"""
KUBEDESCHEDULER = """\
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata: {name: cluster, namespace: openshift-kube-descheduler-operator}
spec:
  managementState: Managed
  mode: Automatic
  deschedulingIntervalSeconds: 3600
  profiles: [LongLifecycle]
"""
# chart 0.29.0 renders v1alpha1 by default: the chart renders the values, and the rendering is converted
HELMRELEASE = flux("0.29.0", "strategies")
WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
"""


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often :func:`desched.policy.effective.effective_policy` ran, by the document's file."""
    calls: Counter[str] = Counter()
    real = effective.effective_policy

    def counting(doc, *args, **kwargs) -> Effective:  # type: ignore[no-untyped-def]
        calls[doc.file] += 1
        return real(doc, *args, **kwargs)

    monkeypatch.setattr(effective, "effective_policy", counting)
    return calls


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often the chart rendered a document's values (:func:`desched.deployment.chartrender.rendered` made a
    ``ChartDoc``), by the document's file."""
    calls: Counter[str] = Counter()
    real = chartrender.rendered

    def counting(doc, *args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(doc, *args, **kwargs)
        if isinstance(out, chartrender.ChartDoc) and out is not doc:
            calls[doc.file] += 1
        return out

    monkeypatch.setattr(chartrender, "rendered", counting)
    return calls


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    for name, text in {
        "v1alpha1.yaml": V1ALPHA1,
        "v1alpha2.yaml": V1ALPHA2,
        "kubedescheduler.yaml": KUBEDESCHEDULER,
        "helmrelease.yaml": HELMRELEASE,
        "workloads.yaml": WORKLOADS,
    }.items():
        (tmp_path / name).write_text(text)
    return tmp_path


ONCE_EACH = {"v1alpha1.yaml": 1, "v1alpha2.yaml": 1, "kubedescheduler.yaml": 1, "helmrelease.yaml": 1}


def test_a_lint_computes_each_policy_once(counted: Counter[str], renders: Counter[str], repository: Path) -> None:
    from desched.linter.lint import lint_paths

    run = lint_paths([str(repository)])
    rules = {finding.rule for finding in run.findings}
    assert "DS401" in rules  # the repository pass ran over every policy
    assert {Path(file).name: n for file, n in counted.items()} == ONCE_EACH
    assert {Path(file).name: n for file, n in renders.items()} == {"helmrelease.yaml": 1}


def test_the_count_catches_a_second_computation(counted: Counter[str], repository: Path) -> None:
    """The test above can fail: a reader that computes the effective policy again is counted."""
    from desched.linter.engine import Settings, lint_file

    result = lint_file(str(repository / "v1alpha1.yaml"), Settings())
    (checked,) = result.checked
    effective.effective_policy(checked.doc, checked.release.target)
    assert counted[str(repository / "v1alpha1.yaml")] == 2


@pytest.mark.parametrize("name", ["v1alpha1.yaml", "helmrelease.yaml"])
def test_the_executor_runs_the_policy_the_lint_gate_computed(
    counted: Counter[str], renders: Counter[str], repository: Path, name: str
) -> None:
    from desched.executor.load import load_policy

    policy, release = load_policy(str(repository / name), "v0.29")
    assert release.minor == 29
    evicting = {ref.name for profile in policy.profiles for ref, _ in profile.evicting()}
    assert "RemoveDuplicates" in evicting  # with the chart's default strategies for the chart values
    assert sum(counted.values()) == 1
    assert sum(renders.values()) == (name == "helmrelease.yaml")


def test_desched_scope_reuses_the_lint_pipelines_effective_policy(
    counted: Counter[str], repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from desched.cli import main

    assert main(["scope", str(repository), "--format", "json"]) == 0
    assert {Path(file).name: n for file, n in counted.items()} == ONCE_EACH
    assert '"converted": true' in capsys.readouterr().out


def test_derivations_say_how_the_policy_was_obtained(repository: Path) -> None:
    from desched.linter.engine import Settings, lint_file

    found = {
        name: lint_file(str(repository / name), Settings()).checked[0].effective.derivation
        for name in ("v1alpha1.yaml", "v1alpha2.yaml", "kubedescheduler.yaml", "helmrelease.yaml")
    }
    assert found == {
        "v1alpha1.yaml": "converted",
        "v1alpha2.yaml": "written",
        "kubedescheduler.yaml": "rendered",
        "helmrelease.yaml": "converted",  # the chart's rendering, a v1alpha1 policy
    }
