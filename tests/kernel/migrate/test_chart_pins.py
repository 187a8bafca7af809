"""desched migrate writes for chart values what the pinned chart runs: a chart before 0.27 hard-codes the v1alpha1
apiVersion in its ConfigMap template, so migrating its values to profiles is refused with the step to take; from
0.27 the output (profiles plus deschedulerPolicyAPIVersion) lints clean under the same chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.cli import main
from tests.conftest import lint

STRATEGIES = "strategies:\n  RemoveDuplicates:\n    enabled: true\n"


def _indented(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in text.splitlines())


def flux(version: str) -> str:
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\n"
        f"spec:\n  chart:\n    spec: {{chart: descheduler, version: {version}}}\n  values:\n    deschedulerPolicy:\n"
        + _indented(STRATEGIES, 6)
    )


def argo(version: str) -> str:
    return (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler, namespace: argocd}\nspec:\n"
        "  source:\n    repoURL: https://kubernetes-sigs.github.io/descheduler/\n    chart: descheduler\n"
        f"    targetRevision: {version}\n    helm:\n      valuesObject:\n        deschedulerPolicy:\n"
        + _indented(STRATEGIES, 10)
    )


def kustomize(version: str) -> str:
    return (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n- name: descheduler\n"
        f"  repo: https://kubernetes-sigs.github.io/descheduler/\n  version: {version}\n  valuesInline:\n"
        "    deschedulerPolicy:\n" + _indented(STRATEGIES, 6)
    )


WRAPPERS = {"flux": flux, "argo": argo, "kustomize": kustomize}


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("version", ["0.25.2", "0.26.1"])
def test_values_pinned_to_a_chart_before_0_27_are_refused_with_the_step(
    wrapper: str, version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "release.yaml"
    text = WRAPPERS[wrapper](version)
    path.write_text(text)
    assert main(["migrate", "--in-place", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"pins descheduler chart {version}, whose ConfigMap template hard-codes apiVersion" in err
    assert "Upgrade the chart to 0.27.0 or later" in err and "keep the v1alpha1 strategies" in err
    assert path.read_text() == text  # nothing written


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("version", ["0.27.0", "0.29.0", "0.31.0"])
def test_from_chart_0_27_the_output_lints_clean_under_the_same_chart(
    wrapper: str, version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(WRAPPERS[wrapper](version))
    assert main(["migrate", "--in-place", str(path)]) == 0
    capsys.readouterr()
    migrated = path.read_text()
    assert "deschedulerPolicyAPIVersion: descheduler/v1alpha2" in migrated and "strategies" not in migrated
    errors = [f for f in lint(migrated, file=str(path)) if f.severity == "error" and f.suppressed is None]
    assert errors == []


@pytest.mark.parametrize(("version", "defaults_written"), [("0.27.1", True), ("0.29.0", True), ("0.30.1", False)])
def test_migrate_writes_the_default_strategies_a_v1alpha1_chart_merges_in(
    tmp_path: Path, version: str, defaults_written: bool
):
    """Charts before 0.30 merge their default strategies (and default params) under the values' strategies, and they
    all run; a v1alpha2 policy drops the chart's default strategies, so migrate writes them out. From chart 0.30 the
    default is a profile, which the values' profiles replace: only what the values say is written."""
    import yaml

    path = tmp_path / "release.yaml"
    path.write_text(
        flux(version).replace(
            _indented(STRATEGIES, 6),
            _indented(
                "strategies:\n  LowNodeUtilization:\n    enabled: true\n    params:\n"
                "      nodeResourceUtilizationThresholds:\n        thresholds: {cpu: 30, memory: 30}\n"
                "        targetThresholds: {cpu: 60, memory: 60}\n",
                6,
            ),
        )
    )
    assert main(["migrate", "--in-place", str(path)]) == 0
    written = path.read_text()
    policy = yaml.safe_load(written)["spec"]["values"]["deschedulerPolicy"]
    names = [profile["name"] for profile in policy["profiles"]]
    low = next(c for c in policy["profiles"][0]["pluginConfig"] if c["name"] == "LowNodeUtilization")
    if defaults_written:
        assert len(names) == 7 and "strategy-RemovePodsViolatingNodeTaints-profile" in names
        assert low["args"]["thresholds"] == {"cpu": 30, "memory": 30, "pods": 20}  # the chart's pods threshold too
    else:
        assert names == ["strategy-LowNodeUtilization-profile"]
        assert low["args"]["thresholds"] == {"cpu": 30, "memory": 30}
    assert [f for f in lint(written) if f.severity in ("error", "warning")] == []
