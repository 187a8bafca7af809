"""The DefaultEvictor decision itself (desched.workloads.eviction), table-driven on a plain pod view.

The executor's live pods and the scope model's templates are adapters of this decision; the tables in
tests/executor/test_defaultevictor.py (upstream's) and tests/executor/test_scope_agreement.py check them end to end.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest

from desched.plugins.defaultevictor import DefaultEvictorArgs
from desched.workloads.eviction import (
    EVICT_ANNOTATION,
    PREFER_NO_EVICTION_ANNOTATION,
    SYSTEM_CRITICAL,
    Check,
    Claim,
    Evictor,
    active_protections,
    evictor,
    filter_failures,
    namespace_failure,
)

NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)


class Pod(NamedTuple):
    """A pod view whose every answer is a field (defaults: an ordinary owned, running pod)."""

    namespace: str = "shop"
    labels: Mapping[str, str] = MappingProxyType({"app": "web"})
    annotations: Mapping[str, str] = MappingProxyType({})
    state_: str | None = None
    source: str = ""
    priority_: int | None = 0
    owned_: bool = True
    failed_: bool = False
    local: str | None = None
    daemonset_: bool = False
    claims_: tuple[Claim, ...] = ()
    pdb: bool = True
    resource_claims_: bool = False
    single_owner_: bool = True
    owner_pods_: int | None = 3
    age_known_: bool = True
    started_: datetime | None = NOW - timedelta(hours=1)
    namespace_labels_: Mapping[str, str] | None = MappingProxyType({"tier": "app"})

    def state(self) -> str | None:
        return self.state_

    def static_source(self) -> str:
        return self.source

    def priority(self) -> int | None:
        return self.priority_

    def owned(self) -> bool:
        return self.owned_

    def failed(self) -> bool:
        return self.failed_

    def local_storage(self) -> str | None:
        return self.local

    def daemonset(self) -> bool:
        return self.daemonset_

    def claims(self) -> Iterator[Claim]:
        return iter(self.claims_)

    def has_pdb(self) -> bool:
        return self.pdb

    def resource_claims(self) -> bool:
        return self.resource_claims_

    def single_owner(self) -> bool:
        return self.single_owner_

    def owner_pods(self) -> int | None:
        return self.owner_pods_

    def age_known(self) -> bool:
        return self.age_known_

    def started(self) -> datetime | None:
        return self.started_

    def namespace_labels(self) -> Mapping[str, str] | None:
        return self.namespace_labels_


CLASSES = {"low": 10, "high": 100_000}


def settings(args: dict[str, Any] | None = None, target: int = 36) -> Evictor:
    return evictor(DefaultEvictorArgs.decode(args or {}), target, NOW, CLASSES.get)


def checks(pod: Pod, args: dict[str, Any] | None = None, target: int = 36) -> list[str]:
    return [failure.check for failure in filter_failures(pod, settings(args, target))]


PROTECT_ALL = {"podProtections": {"extraEnabled": ["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]}}
CASES = [
    # (id, pod, args, target, expected checks in order)
    ("ordinary", Pod(), None, 36, []),
    ("evict annotation overrides all", Pod(annotations={EVICT_ANNOTATION: ""}, state_=Check.MIRROR), None, 36, []),
    (
        "mandatory and prefer-no-eviction",
        Pod(annotations={PREFER_NO_EVICTION_ANNOTATION: ""}, local="emptyDir volume x"),
        {"noEvictionPolicy": "Mandatory"},
        36,
        [Check.PREFER_NO_EVICTION],
    ),
    ("preferred is only a preference", Pod(annotations={PREFER_NO_EVICTION_ANNOTATION: ""}), {}, 36, []),
    (
        "mandatory unknown before v0.34",
        Pod(annotations={PREFER_NO_EVICTION_ANNOTATION: ""}),
        {"noEvictionPolicy": "Mandatory"},
        33,
        [],
    ),
    (
        "mirror pod, then the protections",
        Pod(state_=Check.MIRROR, daemonset_=True),
        None,
        36,
        [
            Check.MIRROR,
            Check.DAEMONSET,
        ],
    ),
    ("system critical", Pod(priority_=SYSTEM_CRITICAL), None, 36, [Check.SYSTEM_CRITICAL]),
    (
        "priority at the threshold",
        Pod(priority_=100),
        {"priorityThreshold": {"value": 100}},
        36,
        [Check.PRIORITY_THRESHOLD],
    ),
    ("priority below the named threshold", Pod(priority_=9), {"priorityThreshold": {"name": "low"}}, 36, []),
    (
        "unknown threshold class",
        Pod(priority_=9),
        {"priorityThreshold": {"name": "nope"}},
        36,
        [Check.THRESHOLD_UNKNOWN],
    ),
    ("unknown priority passes", Pod(priority_=None), {"priorityThreshold": {"value": 1}}, 36, []),
    ("system critical off", Pod(priority_=SYSTEM_CRITICAL), {"evictSystemCriticalPods": True}, 36, []),
    ("bare pod protected", Pod(owned_=False), None, 36, [Check.BARE]),
    ("bare pod not failed", Pod(owned_=False), {"evictFailedBarePods": True}, 36, [Check.BARE_NOT_FAILED]),
    ("bare failed pod", Pod(owned_=False, failed_=True), {"evictFailedBarePods": True}, 36, []),
    ("local storage", Pod(local="emptyDir volume x"), None, 36, [Check.LOCAL_STORAGE]),
    ("local storage allowed", Pod(local="emptyDir volume x"), {"evictLocalStoragePods": True}, 36, []),
    ("daemonset", Pod(daemonset_=True), None, 36, [Check.DAEMONSET]),
    ("daemonset flag unknown at v0.29", Pod(daemonset_=True), {"evictDaemonSetPods": True}, 29, [Check.DAEMONSET]),
    ("daemonset allowed", Pod(daemonset_=True), {"evictDaemonSetPods": True}, 30, []),
    ("any pvc protects", Pod(claims_=(Claim("data", False, ""),)), PROTECT_ALL, 36, [Check.PVC]),
    ("missing pdb", Pod(pdb=False), PROTECT_ALL, 36, [Check.WITHOUT_PDB]),
    ("resource claims", Pod(resource_claims_=True), PROTECT_ALL, 36, [Check.RESOURCE_CLAIMS]),
    (
        "every protection, in upstream's order",
        Pod(
            priority_=SYSTEM_CRITICAL,
            owned_=False,
            local="hostPath volume h",
            daemonset_=True,
            claims_=(Claim("data", True, "fast"),),
            pdb=False,
            resource_claims_=True,
        ),
        PROTECT_ALL,
        36,
        [
            Check.SYSTEM_CRITICAL,
            Check.BARE,
            Check.LOCAL_STORAGE,
            Check.DAEMONSET,
            Check.PVC,
            Check.WITHOUT_PDB,
            Check.RESOURCE_CLAIMS,
        ],
    ),
    (
        "label selector",
        Pod(labels={"app": "db"}),
        {"labelSelector": {"matchLabels": {"app": "web"}}},
        36,
        [Check.LABEL_SELECTOR],
    ),
    ("empty label selector selects all", Pod(labels={}), {"labelSelector": {}}, 36, []),
    ("too few replicas", Pod(owner_pods_=2), {"minReplicas": 3}, 36, [Check.MIN_REPLICAS]),
    ("replica count unknown", Pod(owner_pods_=None), {"minReplicas": 3}, 36, [Check.MIN_REPLICAS_UNKNOWN]),
    ("several owners skip minReplicas", Pod(owner_pods_=1, single_owner_=False), {"minReplicas": 3}, 36, []),
    ("minReplicas unknown before v0.30", Pod(owner_pods_=1), {"minReplicas": 3}, 29, []),
    ("too young", Pod(started_=NOW - timedelta(minutes=1)), {"minPodAge": "5m"}, 36, [Check.MIN_POD_AGE]),
    ("never started", Pod(started_=None), {"minPodAge": "5m"}, 36, [Check.NO_START_TIME]),
    ("age of a template is not judged", Pod(started_=None, age_known_=False), {"minPodAge": "5m"}, 36, []),
    ("minPodAge unknown before v0.31", Pod(started_=None), {"minPodAge": "5m"}, 30, []),
]


@pytest.mark.parametrize(("pod", "args", "target", "expected"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_filter(pod: Pod, args: dict[str, Any] | None, target: int, expected: list[str]):
    assert checks(pod, args, target) == expected


@pytest.mark.parametrize(
    ("claim", "expected", "detail"),
    [
        (Claim("data", False, ""), Check.PVC_UNKNOWN, "data"),
        (Claim("data", True, ""), Check.PVC_NO_CLASS, "data"),
        (Claim("data", True, "fast"), Check.PVC_PROTECTED_CLASS, "data"),
        (Claim("data", True, "slow"), None, ""),
    ],
)
def test_protected_storage_classes(claim: Claim, expected: str | None, detail: str):
    args = {
        "podProtections": {
            "extraEnabled": ["PodsWithPVC"],
            "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "fast"}]}},
        }
    }
    failures = list(filter_failures(Pod(claims_=(claim,)), settings(args)))
    assert [(failure.check, failure.detail) for failure in failures] == ([(expected, detail)] if expected else [])
    assert settings(args, target=34).protected_classes is None  # config unknown before v0.35: every PVC protects


def test_the_executor_can_stop_at_the_first_failure():
    """Checks are computed lazily, so the executor's first-failure answer costs only what it reads."""
    asked: list[str] = []

    class Counting(Pod):
        def has_pdb(self) -> bool:
            asked.append("pdb")
            return False

    failures = filter_failures(Counting(local="emptyDir volume x"), settings(PROTECT_ALL))
    assert next(failures).check == Check.LOCAL_STORAGE and asked == []


@pytest.mark.parametrize(
    ("labels", "target", "expected"),
    [
        ({"tier": "app"}, 36, None),
        ({"tier": "infra"}, 36, Check.NAMESPACE_SELECTOR),
        (None, 36, Check.NAMESPACE_UNKNOWN),
        ({"tier": "infra"}, 34, None),  # namespaceLabelSelector exists from v0.35
    ],
)
def test_namespace_part_of_pre_eviction_filter(labels: dict[str, str] | None, target: int, expected: str | None):
    args = {"namespaceLabelSelector": {"matchLabels": {"tier": "app"}}}
    failure = namespace_failure(Pod(namespace_labels_=labels), settings(args, target))
    assert (failure.check if failure else None) == expected


@pytest.mark.parametrize(("target", "expected"), [(35, None), (36, Check.NAMESPACE_SELECTOR)])
def test_a_namespace_selector_of_expressions_alone_selects_every_namespace_at_v0_35(target: int, expected: str | None):
    """Row namespace-selector-labels-only: v0.35 applies ``namespaceLabelSelector`` only when it has
    ``matchLabels``; the scope model (this function) and the executor decide it alike."""
    args = {"namespaceLabelSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["app"]}]}}
    failure = namespace_failure(Pod(namespace_labels_={"tier": "infra"}), settings(args, target))
    assert (failure.check if failure else None) == expected


def test_effective_protections_follow_the_release():
    defaults = {"PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods"}
    assert active_protections(DefaultEvictorArgs()) == defaults
    new_model = DefaultEvictorArgs.decode(
        {"podProtections": {"defaultDisabled": ["FailedBarePods"], "extraEnabled": ["PodsWithoutPDB"]}}
    )
    assert active_protections(new_model) == defaults - {"FailedBarePods"} | {"PodsWithoutPDB"}
    assert active_protections(new_model, target=33) == defaults
