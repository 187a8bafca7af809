"""What the descheduler needs from the API per release (desched.deployment.access): the declaration's shape, the core's
needs of every release v0.20-v0.36 with and without ``--dry-run`` and ``--leader-elect``, and what plugins, options
and policy-level settings add (upstream kubernetes-sigs/descheduler, read at each minor's last patch tag)."""

from __future__ import annotations

from typing import Any

import pytest

from desched.deployment.access import CORE, DESCHED_RUN, needs, permissions
from desched.plugins import DISTRIBUTIONS
from desched.plugins.base import Need, Setting

VERBS = {"get", "list", "watch", "create", "update", "patch", "delete"}
UPSTREAM = [
    *CORE,
    *(need for build in DISTRIBUTIONS.values() for plugin in build.plugins.values() for need in plugin.needs),
]
LW = ("list", "watch")
PC = "scheduling.k8s.io"

#: What upstream reads on every run, by release (minors, inclusive): (group, resource) -> verbs.
READS: tuple[tuple[int, int, dict[tuple[str, str], tuple[str, ...]]], ...] = (
    (20, 22, {("", "nodes"): ("list",), ("", "pods"): ("list",)}),
    (23, 25, {("", "nodes"): ("list",), ("", "pods"): LW, ("", "namespaces"): LW, (PC, "priorityclasses"): LW}),
    (26, 31, {("", "nodes"): LW, ("", "pods"): LW, ("", "namespaces"): LW, (PC, "priorityclasses"): LW}),
    (32, 34, {("", "nodes"): LW, ("", "pods"): LW, ("", "namespaces"): LW, (PC, "priorityclasses"): LW,
              ("policy", "poddisruptionbudgets"): LW}),
    (35, 36, {("", "nodes"): LW, ("", "pods"): LW, ("", "persistentvolumeclaims"): LW}),
)  # fmt: skip
#: What the v0.35 dry-run sandbox reads on top of them.
SANDBOX = {("", "namespaces"): LW, (PC, "priorityclasses"): LW, ("policy", "poddisruptionbudgets"): LW}

Permit = tuple[str, str, str, str | None, str | None]


def _permits(setting: Setting, fatal: bool = True, program: str = "descheduler") -> set[Permit]:
    """(group, resource, verb, namespace, name) of every need of ``program`` in ``setting`` that is ``fatal`` or not."""
    found = [need for need in needs(setting, program) if need.fatal is fatal]
    return {
        (grant.group, grant.resource, grant.verb, grant.namespace, grant.name) for grant in permissions(setting, found)
    }


def _reads(release: int, dry_run: bool) -> set[Permit]:
    (table,) = [reads for first, last, reads in READS if first <= release <= last]
    table = {**table, **SANDBOX} if dry_run and release >= 35 else table
    return {(group, resource, verb, None, None) for (group, resource), verbs in table.items() for verb in verbs}


@pytest.mark.parametrize("need", UPSTREAM + list(DESCHED_RUN), ids=lambda need: f"{need.resource}:{need.first}")
def test_every_need_names_its_verbs_releases_and_evidence(need: Need) -> None:
    assert need.verbs and set(need.verbs) <= VERBS
    assert need.last is None or need.first <= need.last
    assert need.evidence and need.when.text


@pytest.mark.parametrize("need", UPSTREAM, ids=lambda need: f"{need.resource}:{need.first}")
def test_upstreams_needs_cite_a_release_tag(need: Need) -> None:
    assert need.evidence.startswith("v0.")


@pytest.mark.parametrize("release", range(20, 37))
@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("leader_elect", [False, True])
def test_what_upstream_needs_on_every_run_per_release(release: int, dry_run: bool, leader_elect: bool) -> None:
    """v0.23-v0.34 watch namespaces and priorityclasses whatever the policy (the informers of v0.27.0
    ``descheduler.go:212-213``, v0.30.1 ``:89-90``/``:415-416``, v0.32.0 ``ir.Uses``); v0.32-v0.34 PDBs too; from
    v0.35 only the dry-run sandbox does; evictions without ``--dry-run``; Leases with ``--leader-elect`` from v0.24,
    never with ``--dry-run`` (upstream then runs unelected)."""
    expected = _reads(release, dry_run)
    if not dry_run:
        expected.add(("", "pods/eviction", "create", None, None))
    if leader_elect and not dry_run and release >= 24:
        expected |= {("coordination.k8s.io", "leases", "create", "kube-system", None)}
        expected |= {
            ("coordination.k8s.io", "leases", verb, "kube-system", "descheduler") for verb in ("get", "update")
        }
    assert _permits(Setting(release, dry_run, leader_elect)) == expected


@pytest.mark.parametrize("release", range(20, 37))
@pytest.mark.parametrize("dry_run", [False, True])
def test_events_are_a_best_effort_need(release: int, dry_run: bool) -> None:
    """Core v1 Events to v0.24, events.k8s.io from v0.25 (a fake client in dry-run); a failure is only logged."""
    group = "" if release <= 24 else "events.k8s.io"
    expected = set() if dry_run else {(group, "events", verb, None, None) for verb in ("create", "patch")}
    assert _permits(Setting(release, dry_run), fatal=False) == expected


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("leader_elect", [False, True])
def test_what_desched_run_needs_whatever_the_release(dry_run: bool, leader_elect: bool) -> None:
    listed = {("", "nodes"), ("", "namespaces"), (PC, "priorityclasses"), ("", "persistentvolumeclaims"),
              ("policy", "poddisruptionbudgets"), ("", "pods")}  # fmt: skip
    expected: set[Permit] = {(group, resource, "list", None, None) for group, resource in listed}
    if not dry_run:
        expected.add(("", "pods/eviction", "create", None, None))
    if leader_elect and not dry_run:
        expected |= {("coordination.k8s.io", "leases", "create", "kube-system", None)}
        expected |= {
            ("coordination.k8s.io", "leases", verb, "kube-system", "descheduler") for verb in ("get", "update")
        }
    for release in (27, 36):
        assert _permits(Setting(release, dry_run, leader_elect), program="desched") == expected
    events = set() if dry_run else {("events.k8s.io", "events", "create", None, None)}
    assert _permits(Setting(36, dry_run), fatal=False, program="desched") == events


def _policy(evictor: dict[str, Any] | None = None, plugin: str = "RemovePodsHavingTooManyRestarts",
            args: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:  # fmt: skip
    """A v1alpha2 policy of one profile enabling ``plugin`` with ``args``, and ``evictor`` as the DefaultEvictor's."""
    configs = [{"name": plugin, "args": args or {}}]
    configs += [{"name": "DefaultEvictor", "args": evictor}] if evictor is not None else []
    point = "balance" if "Utilization" in plugin or "TopologySpread" in plugin else "deschedule"
    profile = {"name": "p", "pluginConfig": configs, "plugins": {point: {"enabled": [plugin]}}}
    return {"profiles": [profile], **top}


def _added(release: int, policy: dict[str, Any], dry_run: bool = False) -> set[Permit]:
    """What ``policy`` adds to the core's needs at ``release``."""
    return _permits(Setting(release, dry_run, policy=policy)) - _permits(Setting(release, dry_run))


_NAMED = {"priorityThreshold": {"name": "high"}}
_CLASS_GET = {(PC, "priorityclasses", "get", None, None)}
_NAMESPACES = {("", "namespaces", verb, None, None) for verb in LW}
_PDBS = {("policy", "poddisruptionbudgets", verb, None, None) for verb in LW}
_LABELS = {"namespaceLabelSelector": {"matchLabels": {"team": "a"}}}
_EXPRESSIONS = {"namespaceLabelSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]}}
_WITHOUT_PDB = {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}


@pytest.mark.parametrize(
    ("release", "evictor", "dry_run", "added"),
    [
        # a named threshold's PriorityClass is read with the real client, --dry-run too: by the strategies to v0.26,
        # when the policy is loaded from v0.27 (pkg/descheduler/policyconfig.go)
        (26, _NAMED, True, _CLASS_GET),
        (27, _NAMED, True, _CLASS_GET),
        (36, _NAMED, False, _CLASS_GET),
        (36, {"priorityThreshold": {"value": 1000}}, False, set()),
        # namespaceLabelSelector: v0.35 reads matchLabels alone, v0.36 matchExpressions too; before, the core's
        (34, _LABELS, False, set()),
        (35, _LABELS, False, _NAMESPACES),
        (35, _EXPRESSIONS, False, set()),
        (36, _EXPRESSIONS, False, _NAMESPACES),
        # PodsWithoutPDB: the core reads PDBs anyway in v0.32-v0.34; required from v0.35 (upstream #1882, #1883)
        (33, {"ignorePodsWithoutPDB": True}, False, set()),
        (36, _WITHOUT_PDB, False, _PDBS),
        (36, _WITHOUT_PDB, True, set()),  # the dry-run sandbox reads them already
        (36, {"nodeFit": True, "minReplicas": 2, "ignorePvcPods": True}, False, set()),
    ],
)
def test_what_the_default_evictors_options_add(release, evictor, dry_run, added):
    assert _added(release, _policy(evictor), dry_run) == added


def test_the_default_evictor_reads_its_args_in_every_profile():
    policy = _policy()
    policy["profiles"].append({"name": "q", "pluginConfig": [{"name": "DefaultEvictor", "args": _NAMED}]})
    assert _added(36, policy) == _CLASS_GET


_POD_METRICS = ("metrics.k8s.io", "pods", "get", None, None)
_NODE_METRICS = ("metrics.k8s.io", "nodes", "get", None, None)
_FROM_PROMETHEUS = {"metricsUtilization": {"source": "Prometheus"}}
_PROMETHEUS = {"source": "Prometheus", "prometheus": {"url": "https://prometheus:9090"}}
_TOKEN = {"authToken": {"secretReference": {"namespace": "mon", "name": "token"}}}
_WITH_TOKEN = {**_PROMETHEUS, "prometheus": {**_PROMETHEUS["prometheus"], **_TOKEN}}


@pytest.mark.parametrize(
    ("release", "plugin", "args", "top", "added"),
    [
        # to v0.22 TopologySpread is the only namespace reader; up to v0.27 the core's watch covers its list
        (22, "RemovePodsViolatingTopologySpreadConstraint", {}, {}, {("", "namespaces", "list", None, None)}),
        (22, "RemoveDuplicates", {}, {}, set()),
        (28, "RemovePodsViolatingTopologySpreadConstraint", {}, {}, set()),
        # LowNodeUtilization with metrics-server GETs pod metrics; the collector GETs node metrics
        (33, "LowNodeUtilization", {"metricsUtilization": {"source": "KubernetesMetrics"}},
         {"metricsProviders": [{"source": "KubernetesMetrics"}]}, {_POD_METRICS, _NODE_METRICS}),
        (32, "LowNodeUtilization", {"metricsUtilization": {"metricsServer": True}},
         {"metricsCollector": {"enabled": True}}, {_POD_METRICS, _NODE_METRICS}),
        (33, "HighNodeUtilization", {}, {"metricsCollector": {"enabled": True}}, {_NODE_METRICS}),
        # the Prometheus token's Secret: an informer in its namespace
        (33, "LowNodeUtilization", _FROM_PROMETHEUS, {"metricsProviders": [_WITH_TOKEN]},
         {("", "secrets", verb, "mon", None) for verb in LW}),
        (33, "LowNodeUtilization", _FROM_PROMETHEUS, {"metricsProviders": [_PROMETHEUS]}, set()),
    ],
)  # fmt: skip
def test_what_plugins_and_policy_settings_add(release, plugin, args, top, added):
    assert _added(release, _policy(None, plugin, args, **top)) == added


@pytest.mark.parametrize(
    ("release", "lock", "added"),
    [(27, "endpointsleases", "endpoints"), (27, "configmapsleases", "configmaps"), (28, "endpointsleases", None),
     (27, "leases", None)],
)  # fmt: skip
def test_a_migration_lock_of_v0_24_to_v0_27_needs_its_kind_too(release, lock, added):
    leases = Setting(release, leader_elect=True, flags={"leader-elect-resource-namespace": "ops"})
    locked = leases._replace(flags={**leases.flags, "leader-elect-resource-lock": lock})
    found = _permits(locked) - _permits(leases)
    expected = {("", added, "create", "ops", None)} | {
        ("", added, verb, "ops", "descheduler") for verb in ("get", "update")
    }
    assert found == (expected if added else set())


def test_a_lease_namespace_desched_could_not_expand_is_the_pods():
    flags = {"leader-elect-resource-namespace": "$(POD_NAMESPACE)", "leader-elect-resource-name": "ds"}
    found = _permits(Setting(36, leader_elect=True, flags=flags, namespace="tools"))
    assert {permit for permit in found if permit[1] == "leases"} == {
        ("coordination.k8s.io", "leases", "create", "tools", None),
        ("coordination.k8s.io", "leases", "get", "tools", "ds"),
        ("coordination.k8s.io", "leases", "update", "tools", "ds"),
    }
