"""PDB budgets (intstr rounding as the disruption controller does) and PDB matching through the index."""

from __future__ import annotations

import pytest

from desched.workloads.model import PDB, collect
from desched.workloads.pdb import PDBIndex, allowed_disruptions, scaled_value


def pdb(min_available=None, max_unavailable=None, selector=None, namespace="default", api="policy/v1", name="p"):
    return PDB(
        namespace, name, api, selector if selector is not None else {}, min_available, max_unavailable, "f", 1, 1
    )


BUDGETS = [
    # (description, minAvailable, maxUnavailable, replicas, allowed)
    ("maxUnavailable 50% of 3 rounds up to 2", None, "50%", 3, 2),
    ("maxUnavailable 0% allows nothing", None, "0%", 3, 0),
    ("maxUnavailable 0 allows nothing", None, 0, 5, 0),
    ("maxUnavailable 1 of 3", None, 1, 3, 1),
    ("maxUnavailable 10 of 3 is capped at the pod count", None, 10, 3, 3),
    ("maxUnavailable 1% of 3 rounds up to 1", None, "1%", 3, 1),
    ("maxUnavailable 100% of 4", None, "100%", 4, 4),
    ("minAvailable 50% of 3: ceil 2 must stay, 1 allowed", "50%", None, 3, 1),
    ("minAvailable 50% of 4: 2 must stay", "50%", None, 4, 2),
    ("minAvailable 100% allows nothing", "100%", None, 5, 0),
    ("minAvailable 0% allows all", "0%", None, 5, 5),
    ("minAvailable 1% of 3: ceil 1 must stay", "1%", None, 3, 2),
    ("minAvailable 2 of 3", 2, None, 3, 1),
    ("minAvailable 3 of 3 allows nothing", 3, None, 3, 0),
    ("minAvailable 5 of 3 is floored at 0", 5, None, 3, 0),
    ("minAvailable 0 of 2 allows all", 0, None, 2, 2),
    ("no pods: expected count 0 allows nothing", None, "50%", 0, 0),
    ("minAvailable 0 and no pods", 0, None, 0, 0),
    ("neither field: expected stays 0, controller writes 0", None, None, 3, 0),
    ("maxUnavailable wins when both are set", 3, 1, 3, 1),
]


@pytest.mark.parametrize(
    ("min_available", "max_unavailable", "replicas", "allowed"), [b[1:] for b in BUDGETS], ids=[b[0] for b in BUDGETS]
)
def test_allowed_disruptions(min_available, max_unavailable, replicas, allowed):
    assert allowed_disruptions(pdb(min_available, max_unavailable), replicas) == allowed


@pytest.mark.parametrize("value", ["50", "abc", "5.5%", "%", "50%\n"])
def test_malformed_intstr_is_unknown(value):
    assert scaled_value(value, 3) is None
    assert allowed_disruptions(pdb(max_unavailable=value), 3) is None
    assert allowed_disruptions(pdb(min_available=value), 3) is None


def test_unknown_pod_count_is_unknown():
    assert allowed_disruptions(pdb(max_unavailable=1), None) is None


def test_scaled_value_rounds_up():
    assert scaled_value("50%", 3) == 2
    assert scaled_value("33%", 10) == 4
    assert scaled_value("+20%", 10) == 2
    assert scaled_value(7, 100) == 7


def _inventory(*docs):
    return collect([("m.yaml", doc) for doc in docs])


def _deploy(name, labels, namespace="default"):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {}}},
    }


def _pdb(name, selector, namespace="default", api="policy/v1"):
    doc = {"apiVersion": api, "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": namespace}}
    doc["spec"] = {"maxUnavailable": 1} if selector is None else {"selector": selector, "maxUnavailable": 1}
    return doc


def _names(inv, workload):
    return sorted(p.name for p in PDBIndex(inv.pdbs).matching(workload))


def test_matching_rules():
    inv = _inventory(
        _deploy("web", {"app": "web", "tier": "fe"}),
        _pdb("by-label", {"matchLabels": {"app": "web"}}),
        _pdb("two-labels", {"matchLabels": {"tier": "fe", "app": "web"}}),
        _pdb("other-label", {"matchLabels": {"app": "db"}}),
        _pdb("expr-only", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe"]}]}),
        _pdb("expr-miss", {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["fe"]}]}),
        _pdb(
            "label-and-expr-miss",
            {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "zone", "operator": "Exists"}]},
        ),
        _pdb("empty-v1", {}),
        _pdb("empty-v1beta1", {}, api="policy/v1beta1"),
        _pdb("nil-selector", None),
        _pdb("invalid", {"matchExpressions": [{"key": "app", "operator": "In"}]}),
        _pdb("other-namespace", {"matchLabels": {"app": "web"}}, namespace="prod"),
        _pdb("v1beta1-labels", {"matchLabels": {"app": "web"}}, api="policy/v1beta1"),
    )
    assert _names(inv, inv.workloads[0]) == ["by-label", "empty-v1", "expr-only", "two-labels", "v1beta1-labels"]


def test_empty_v1_selector_matches_every_pod_of_its_namespace_only():
    inv = _inventory(_deploy("a", {}), _deploy("b", {"x": "y"}, namespace="prod"), _pdb("all", {}))
    index = PDBIndex(inv.pdbs)
    assert [p.name for p in index.matching(inv.workloads[0])] == ["all"]
    assert index.matching(inv.workloads[1]) == []
