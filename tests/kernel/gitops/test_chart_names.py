"""Chart names a wrapper writes (desched.gitops.wrappers, issue 37): a name the chart's repository cannot serve is
the chart meant, kept pinned, with the reason it cannot be fetched; a name of another chart is no install."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from desched.gitops.wrappers import installs, served_charts


def _release(chart: str, version: str | None = "0.25.2") -> dict[str, Any]:
    spec: dict[str, Any] = {"chart": chart, "sourceRef": {"kind": "HelmRepository", "name": "charts"}}
    if version is not None:
        spec["version"] = version
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "descheduler", "namespace": "kube-system"},
        "spec": {"chart": {"spec": spec}},
    }


def test_the_served_charts_are_named_with_their_versions_as_ranges():
    assert served_charts() == (
        "descheduler (0.18.2, 0.19.2 to 0.36.0) and descheduler-helm-chart (0.18.1, 0.18.998 to 0.19.1)"
    )


def test_a_misnamed_chart_is_an_install_that_keeps_its_pin():
    (install,) = installs(_release("descheduler-charts"))
    assert (install.version, install.version_path) == ("0.25.2", ("spec", "chart", "spec", "version"))
    assert install.chart_path == ("spec", "chart", "spec", "chart")
    assert install.unserved is not None and install.unserved.startswith(
        "the descheduler chart repository serves no chart descheduler-charts: it serves descheduler ("
    )


@pytest.mark.parametrize(
    ("chart", "version", "unserved"),
    [
        ("descheduler", "0.25.2", None),
        ("descheduler", "0.19.0", "serves chart version 0.19.0 as descheduler-helm-chart, not descheduler"),
        ("descheduler-helm-chart", "0.30.1", "serves chart version 0.30.1 as descheduler, not descheduler-helm-chart"),
        ("descheduler", "0.25.x", None),  # a range: the version the tool picks is served under the name
        ("mirror/descheduler", None, None),
    ],
)
def test_a_chart_version_is_served_under_the_name_of_its_records(chart, version, unserved):
    (install,) = installs(_release(chart, version))
    assert (install.unserved.split("repository ", 1)[1] if install.unserved else None) == unserved


@pytest.mark.parametrize("chart", ["oci://ghcr.io/acme/descheduler-charts", "kube-state-metrics", "scheduler"])
def test_another_chart_is_no_install(chart):
    assert list(installs(_release(chart))) == []


def test_argo_and_kustomize_report_a_misnamed_chart_too():
    argo = yaml.safe_load(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: d}\nspec:\n  source:\n"
        "    chart: descheduler-chart\n    repoURL: https://kubernetes-sigs.github.io/descheduler/\n"
        "    targetRevision: 0.33.0\n"
    )
    kustomization = yaml.safe_load("helmCharts:\n- {name: descheduler-chart, version: 0.33.0}\n")
    (from_argo,) = installs(argo)
    (from_kustomize,) = installs(kustomization, "kustomization.yaml")
    assert from_argo.chart_path == ("spec", "source", "chart")
    assert from_kustomize.chart_path == ("helmCharts", 0, "name")
    assert all(
        found.unserved and "no chart descheduler-chart" in found.unserved for found in (from_argo, from_kustomize)
    )


def test_a_chart_that_says_descheduler_from_another_repository_is_no_install():
    kustomization = yaml.safe_load(
        "helmCharts:\n- {name: descheduler-config, repo: https://charts.example.com, version: 1.0.0}\n"
    )
    assert list(installs(kustomization, "kustomization.yaml")) == []
