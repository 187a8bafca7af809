"""Policies inside GitOps wrappers of the descheduler chart's values (desched.gitops.wrappers): found by the one policy
locator for lint, migrate and the webhook, with exact positions, and only for the descheduler chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.gitops.documents import locate_policies
from desched.gitops.wrappers import is_descheduler_chart
from desched.linter.engine import Settings, lint_text
from desched.migrate.rewrite import migrate_text
from desched.reading.yamlsrc import load_all
from desched.webhook.decision import Options
from desched.webhook.review import decide
from tests.conftest import lint

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wrappers"

# file: the findings (rule, line, column, JSON pointer) its policies give; positions are in the wrapper's file.
EXPECTED: dict[str, list[tuple[str, int, int, str]]] = {
    "flux-helmrelease.yaml": [
        ("DS303", 25, 35, "/spec/values/deschedulerPolicy/profiles/0/pluginConfig/0/args/thresholds/cpu"),
    ],
    "flux-values-from.yaml": [("DS203", 27, 25, "/profiles/0/plugins/deschedule/enabled/0")],
    "argo-application.yaml": [
        ("DS204", 22, 25, "/profiles/0/pluginConfig/0/name"),
        ("DS301", 24, 42, "/profiles/0/pluginConfig/0/args/podRestartThreshold"),
        ("DS005", 27, 29, "/profiles/0/plugins/deschedule/enabled/0"),
    ],
    "argo-multisource.yaml": [
        (
            "DS308",
            24,
            39,
            "/spec/sources/1/helm/valuesObject/deschedulerPolicy/profiles/0/pluginConfig/0/args/includedTaints",
        ),
    ],
    "argo-applicationset.yaml": [
        (
            "DS205",
            34,
            33,
            "/spec/template/spec/source/helm/valuesObject/deschedulerPolicy/profiles/0/plugins/balance/enabled/0",
        ),
    ],
    "kustomize/kustomization.yaml": [
        ("DS203", 16, 27, "/helmCharts/0/valuesInline/deschedulerPolicy/profiles/0/plugins/balance/enabled/0"),
    ],
}


def _lint(name: str, target: int | None = None) -> list[Any]:
    path = FIXTURES / name
    return lint_text(str(path), path.read_text(encoding="utf-8"), Settings(target=target)).findings


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_findings_inside_wrappers_point_at_the_lines_written(name: str) -> None:
    found = [(f.rule, f.line, f.column, f.path) for f in _lint(name)]
    assert found == EXPECTED[name]


def test_the_line_a_finding_names_holds_the_key_it_reports() -> None:
    lines = (FIXTURES / "argo-application.yaml").read_text(encoding="utf-8").splitlines()
    for finding in _lint("argo-application.yaml"):
        key = str(finding.path).rsplit("/", 1)[-1]
        text = lines[finding.line - 1]
        assert key in text or key.isdigit(), (finding, text)


def test_every_wrapper_shape_is_located_with_its_path() -> None:
    found = {}
    for name in sorted(EXPECTED):
        docs = load_all((FIXTURES / name).read_text(encoding="utf-8"))
        found[name] = [(loc.shape, loc.path, loc.keys, loc.hint) for loc in locate_policies(docs)]
    assert found == {
        "argo-application.yaml": [("values-text", (0, "spec", "source", "helm"), ("values",), "0.32.2")],
        "argo-applicationset.yaml": [
            ("helm", (0, "spec", "template", "spec", "source", "helm", "valuesObject"), (), "0.34.0")
        ],
        "argo-multisource.yaml": [("helm", (0, "spec", "sources", 1, "helm", "valuesObject"), (), "0.31.0")],
        "flux-helmrelease.yaml": [("helm", (0, "spec", "values"), (), "0.33.0"), ("other", (1,), (), None)],
        "flux-values-from.yaml": [("other", (0,), (), None), ("values-text", (1, "data"), ("values.yaml",), None)],
        "kustomize/kustomization.yaml": [("helm", (0, "helmCharts", 0, "valuesInline"), (), "0.30.1")],
    }


@pytest.mark.parametrize(
    ("name", "repository", "expected"),
    [
        ("descheduler", None, True),
        ("descheduler/descheduler", None, True),
        ("oci://registry.example.com/charts/descheduler", None, True),
        ("oci://ghcr.io/example/descheduler:0.31.0", None, True),
        ("oci://ghcr.io/example/descheduler@sha256:0123", None, True),
        ("descheduler-helm-chart", None, True),  # the chart's name up to 0.19.1
        ("descheduler/descheduler-helm-chart", None, True),
        (None, "https://kubernetes-sigs.github.io/descheduler/", True),
        (None, "https://github.com/kubernetes-sigs/descheduler.git", True),
        ("descheduler-extra", None, False),
        ("ingress-nginx", "https://kubernetes.github.io/ingress-nginx", False),
        (None, None, False),
    ],
)
def test_only_the_descheduler_chart_counts(name: Any, repository: Any, expected: bool) -> None:
    assert is_descheduler_chart(name, repository) is expected


def test_a_helm_release_of_the_old_chart_name_is_linted() -> None:
    """Chart 0.19.1 was published as descheduler-helm-chart: its values are a policy desched checks."""
    text = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler}\nspec:\n"
        "  chart:\n    spec: {chart: descheduler-helm-chart, version: 0.19.1}\n  values:\n    deschedulerPolicy:\n"
        "      strategies:\n        RemoveDuplicate: {enabled: true}\n"
    )
    assert "DS104" in {finding.rule for finding in lint(text)}


def test_the_wrapper_pins_the_release_a_policy_is_checked_against() -> None:
    text = (FIXTURES / "flux-helmrelease.yaml").read_text(encoding="utf-8")
    evictor = (
        "            - name: DefaultEvictor\n              args:\n                podProtections:\n"
        "                  extraEnabled: [PodsWithPVC]\n"
    )
    text = text.replace("          pluginConfig:\n", "          pluginConfig:\n" + evictor, 1)
    gated = [f for f in lint_text("f.yaml", text, Settings()).findings if f.rule == "DS006"]
    assert [(f.line, "v0.33" in f.message) for f in gated] == [(25, True)]  # chart 0.33.0: podProtections is v0.34
    newer = text.replace("version: 0.33.0", "version: 0.34.0")
    assert [f for f in lint_text("f.yaml", newer, Settings()).findings if f.rule == "DS006"] == []
    assert [f for f in lint_text("f.yaml", text, Settings(target=36)).findings if f.rule == "DS006"] == []


V1ALPHA1_VALUES = """\
deschedulerPolicyAPIVersion: descheduler/v1alpha1
deschedulerPolicy:
  strategies:
    RemovePodsHavingTooManyRestarts:
      enabled: true
      params:
        podsHavingTooManyRestarts:
          podRestartThreshold: 10
"""


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(keepends=True))


WRAPPED_V1ALPHA1 = {
    "flux": (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler}\nspec:\n"
        "  chart:\n    spec: {chart: descheduler, version: 0.29.0}\n  values:\n" + _indent(V1ALPHA1_VALUES, 4)
    ),
    "argo-values-string": (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  source:\n"
        "    repoURL: https://kubernetes-sigs.github.io/descheduler/\n    chart: descheduler\n"
        "    targetRevision: 0.29.0\n    helm:\n      values: |\n" + _indent(V1ALPHA1_VALUES, 8)
    ),
    "argo-sources": (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  sources:\n"
        "  - repoURL: https://kubernetes-sigs.github.io/descheduler/\n    chart: descheduler\n"
        "    helm:\n      valuesObject:\n" + _indent(V1ALPHA1_VALUES, 8)
    ),
    "kustomize": (
        "helmCharts:\n- name: descheduler\n  repo: https://kubernetes-sigs.github.io/descheduler/\n"
        "  version: 0.29.0\n  valuesInline:\n" + _indent(V1ALPHA1_VALUES, 4)
    ),
    "configmap-values": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler-values}\ndata:\n  values.yaml: |\n"
        + _indent(V1ALPHA1_VALUES, 4)
    ),
}


@pytest.mark.parametrize("name", sorted(WRAPPED_V1ALPHA1))
def test_migrate_rewrites_v1alpha1_inside_each_wrapper_in_place(name: str) -> None:
    text = WRAPPED_V1ALPHA1[name]
    assert "DS101" in [f.rule for f in lint_text("w.yaml", text, Settings()).findings]
    result = migrate_text("w.yaml", text)
    assert result.changed and not result.errors
    after = lint_text("w.yaml", result.text, Settings())
    assert len(after.policies) == 1
    assert [f.rule for f in after.findings if f.severity == "error"] == []
    assert "DS101" not in [f.rule for f in after.findings]
    before_lines, after_lines = text.splitlines(), result.text.splitlines()
    wrapper_head = next(i for i, line in enumerate(before_lines) if "deschedulerPolicyAPIVersion" in line)
    assert after_lines[:wrapper_head] == before_lines[:wrapper_head]  # the wrapper around the values is untouched
    assert "podRestartThreshold: 10" in result.text


@pytest.mark.parametrize(
    ("name", "allowed", "pointer"),
    [
        (
            "flux-helmrelease.yaml",
            False,
            "/spec/values/deschedulerPolicy/profiles/0/pluginConfig/0/args/thresholds/cpu",
        ),
        ("argo-multisource.yaml", True, ""),  # DS308 is a warning
        ("argo-applicationset.yaml", False, "/spec/template/spec/source/helm/valuesObject/deschedulerPolicy"),
        ("argo-application.yaml", False, "/profiles/0/plugins/deschedule/enabled/0"),
    ],
)
def test_the_webhook_checks_wrappers_it_is_sent(name: str, allowed: bool, pointer: str) -> None:
    obj = next(yaml.safe_load_all((FIXTURES / name).read_text(encoding="utf-8")))
    request = {"uid": "1", "kind": {"kind": obj["kind"]}, "operation": "CREATE", "object": json.loads(json.dumps(obj))}
    decision = decide(request, Options())
    assert decision.allowed is allowed
    assert pointer in decision.message


def test_the_webhook_allows_a_wrapper_of_another_chart_at_once() -> None:
    obj = yaml.safe_load_all((FIXTURES / "flux-helmrelease.yaml").read_text(encoding="utf-8"))
    other = list(obj)[1]
    decision = decide({"uid": "1", "kind": {"kind": "HelmRelease"}, "operation": "CREATE", "object": other}, Options())
    assert decision.allowed and decision.message == "" and decision.warnings == []


def test_the_webhook_checks_chart_values_in_a_configmap() -> None:
    obj = list(yaml.safe_load_all((FIXTURES / "flux-values-from.yaml").read_text(encoding="utf-8")))[1]
    decision = decide({"uid": "1", "kind": {"kind": "ConfigMap"}, "operation": "CREATE", "object": obj}, Options())
    assert not decision.allowed and "DS203" in decision.message and "data[values.yaml]:6:21" in decision.message
