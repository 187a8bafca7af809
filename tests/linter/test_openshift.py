"""KubeDescheduler documents in the lint pipeline: recognition, rules, and the rendered policy's findings."""

from __future__ import annotations

import pytest

from desched.gitops.documents import extract
from desched.linter.rules._workload_examples import deployment
from tests.conftest import lint

KD = """\
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata:
  name: cluster
  namespace: openshift-kube-descheduler-operator
spec:
  mode: Automatic
  deschedulingIntervalSeconds: 3600
  profiles:
  - LifecycleAndUtilization
  profileCustomizations:
    podLifetime: 5m
"""


def test_raw_document_is_recognised():
    docs = extract("kd.yaml", KD).policies
    assert [(d.shape, d.api_version, d.object) for d in docs] == [
        ("kubedescheduler", "operator.openshift.io/v1", "KubeDescheduler openshift-kube-descheduler-operator/cluster")
    ]


def test_multi_document_and_list_are_recognised():
    policy = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"
    assert [d.shape for d in extract("f", policy + "---\n" + KD).policies] == ["policy", "kubedescheduler"]
    indented = "".join(("  " + line if line else line) + "\n" for line in KD.splitlines())
    listed = "apiVersion: v1\nkind: List\nitems:\n-" + indented[1:]
    docs = extract("f", listed).policies
    assert [d.shape for d in docs] == ["kubedescheduler"]
    found = lint(listed.replace("podLifetime: 5m", "podLifetime: 5m\n      devHighNodeUtilizationThresholds: Modest"))
    assert [(f.rule, f.line) for f in found if f.rule == "DS503"] == [("DS503", 16)]


def test_policy_rules_do_not_run_on_the_cr_itself():
    found = lint(KD)
    assert not [f for f in found if f.rule.startswith(("DS00", "DS1"))]
    assert all(f.rule in ("DS311",) or f.rule.startswith("DS5") for f in found), found


def test_rendered_policy_findings_point_at_the_cr():
    found = [f for f in lint(KD) if f.rule == "DS311"]
    assert len(found) == 1
    assert found[0].message.startswith("in the policy the operator renders: ")
    assert (found[0].line, found[0].column) == (12, 18)  # podLifetime: 5m
    assert found[0].object == "KubeDescheduler openshift-kube-descheduler-operator/cluster"
    assert found[0].path == "/spec/profileCustomizations/podLifetime"


def test_rendered_finding_without_a_customisation_points_at_the_profile():
    text = KD.replace(
        "  profileCustomizations:\n    podLifetime: 5m\n", "  profileCustomizations:\n    thresholdPriority: -5\n"
    )
    text = text.replace("LifecycleAndUtilization", "AffinityAndTaints")
    found = [f for f in lint(text) if not f.rule.startswith("DS5")]
    for finding in found:
        assert finding.line in (10, 12), finding


def test_refused_cr_reports_only_its_own_errors():
    text = KD.replace("  - LifecycleAndUtilization\n", "  - LifecycleAndUtilization\n  - CompactAndScale\n")
    found = lint(text)
    assert [(f.rule, f.line, f.column) for f in found] == [("DS501", 11, 5)]


def test_ordinary_policies_get_no_openshift_findings():
    policy = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"
    assert not [f for f in lint(policy) if f.rule.startswith("DS5")]


@pytest.mark.parametrize("mode", ["Automatic", "Predictive"])
def test_pdb_analysis_evaluates_the_rendered_policy(mode):
    text = KD.replace("LifecycleAndUtilization", "AffinityAndTaints").replace("Automatic", mode)
    text = text.replace("    podLifetime: 5m\n", "    namespaces: {included: [shop]}\n")
    found = lint(text + deployment("web", 3), file="all.yaml")
    assert [f.rule for f in found if f.rule == "DS401"] == ["DS401"]
