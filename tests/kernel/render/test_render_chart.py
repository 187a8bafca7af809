"""``desched render`` on chart inputs: what the pinned chart version renders from a HelmRelease, an Argo CD
Application, a kustomization's ``helmCharts`` or a values file alone (golden files, checked against the Helm engine
when written: the same ConfigMap policy, workload fields and ClusterRole rules, the rules' order aside), and its exit
codes. Rewrite the goldens with ``DESCHED_UPDATE_GOLDENS=1`` and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from desched.cli import main

GOLDEN = Path(__file__).parent / "golden"
INPUTS = ["helmrelease.yaml", "argo-application.yaml", "kustomize/kustomization.yaml", "values.yaml"]


def _render(capsys: pytest.CaptureFixture[str], path: str) -> tuple[int, str, str]:
    code = main(["render", path])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", INPUTS)
def test_render_prints_what_the_chart_renders(capsys, monkeypatch, name: str):
    monkeypatch.chdir(GOLDEN)
    code, out, err = _render(capsys, name)
    expected = GOLDEN / (name.replace("/", "-").removesuffix(".yaml") + ".rendered.yaml")
    if os.environ.get("DESCHED_UPDATE_GOLDENS") == "1":
        expected.write_text(out)
    assert (code, out) == (0, expected.read_text())
    assert err.startswith(f"{name}: note: chart ")


def _release(version: str, values: str) -> str:
    block = "".join(f"    {line}\n" for line in values.splitlines())
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler, namespace: ops}\n"
        f"spec:\n  chart:\n    spec: {{chart: descheduler, version: {version}}}\n  values:\n{block}"
    )


def test_the_objects_are_those_a_release_installs(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("0.36.0", "kind: Deployment\nleaderElection: {enabled: true}"))
    code, out, _ = _render(capsys, str(path))
    documents = list(yaml.safe_load_all(out))
    kinds = [(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")) for d in documents]
    assert code == 0 and kinds == [
        ("ConfigMap", "descheduler", "ops"),
        ("ClusterRole", "descheduler", None),
        ("ClusterRoleBinding", "descheduler", None),
        ("Deployment", "descheduler", "ops"),
    ]
    args = documents[-1]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--leader-elect=true" in args and "--descheduling-interval=5m" in args


def test_a_null_policy_from_chart_0_30_0_renders_no_configmap(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("0.30.0", "deschedulerPolicy: null"))
    code, out, err = _render(capsys, str(path))
    assert code == 0 and "kind: ConfigMap" not in out and "kind: CronJob" in out
    assert "no policy ConfigMap" in err and "ConfigMap descheduler, which you provide" in err


def test_a_null_policy_before_chart_0_30_0_is_written_and_cannot_be_read(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("0.29.0", "deschedulerPolicy: null"))
    code, out, err = _render(capsys, str(path))
    configmap = next(yaml.safe_load_all(out))
    assert code == 1
    assert configmap["data"]["policy.yaml"] == 'apiVersion: "descheduler/v1alpha1"\nkind: "DeschedulerPolicy"\nnull\n'
    assert f"{path}: error: the policy.yaml the chart writes is not YAML the descheduler can read" in err


def test_a_render_the_chart_refuses_prints_nothing_and_exits_1(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("0.24.0", "kind: Deployment\nreplicas: 2"))
    code, out, err = _render(capsys, str(path))
    assert (code, out) == (1, "")
    assert "error: Helm refuses to render chart 0.24.0: the chart's template fails the render" in err


def test_an_install_the_api_server_rejects_is_printed_and_exits_1(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("0.24.0", "kind: Deployment\nleaderElection: {enabled: true}"))
    code, out, err = _render(capsys, str(path))
    assert code == 1 and "- --leader-elect\n" in out
    assert "error: the chart writes the argument true unquoted" in err


def test_a_chart_version_without_a_record_exits_2(capsys, tmp_path: Path):
    path = tmp_path / "release.yaml"
    path.write_text(_release("9.9.9", "kind: Deployment"))
    code, out, err = _render(capsys, str(path))
    assert (code, out) == (2, "")
    assert err.startswith("desched: ") and "no record of chart version 9.9.9" in err


def test_render_reads_the_pin_a_sibling_file_of_its_unit_writes(capsys, monkeypatch, tmp_path: Path):
    """A HelmRelease whose chart an OCIRepository beside it pins renders that chart version, as desched lint judges
    it (issue 37, observed 3): render reads the deploy unit of the file it is given."""
    fixture = Path(__file__).parents[2] / "fixtures" / "units" / "flux-oci"
    for name in ("helmrelease.yaml", "ocirepository.yaml"):
        (tmp_path / name).write_text((fixture / name).read_text())
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = _render(capsys, "helmrelease.yaml")
    assert code == 0 and "descheduler:v0.31.0" in out
    assert "chart 0.31.0, pinned by HelmRelease kube-system/descheduler" in err
