"""PodLifeTime (Deschedule, docs/executor-semantics.md#89-podlifetime): evict pods past an age, or in given states,
conditions or exit codes.

Contract: every pod of every node, whatever its phase, is a candidate when it passes the plugin's namespace and label
filters, the profile's ``Filter``, every configured criterion (``maxPodLifeTimeSeconds``: age from creationTimestamp
strictly greater; ``states``; ``ownerKinds``; ``conditions``; ``exitCodes``) and ``PreEvictionFilter``. The candidates
of all nodes are evicted oldest first (creationTimestamp; ties as Go's unstable sort leaves them). A node limit skips
only that pod, a total limit stops the plugin, any other refusal moves on to the next pod. ``PreEvictionFilter`` runs
while listing, before any eviction, as upstream: an eviction can free room on another node, so NodeFit cannot be
deferred here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from desched.executor import podutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.executor.gosort import sort_slice
from desched.executor.plugins._pods import container_statuses, exit_codes, state_reasons, whole_seconds
from desched.plugins.podlifetime import PodLifeTimeArgs

NAME = "PodLifeTime"


# -- criteria ------------------------------------------------------------------------------------------------------


def _time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp, or None for an unset or zero one (``metav1.Time.IsZero``)."""
    if not isinstance(value, str) or not value:
        return None
    parsed = datetime.fromisoformat(value)
    parsed = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)
    return None if parsed == podutil.ZERO_TIME else parsed


Criterion = Callable[[Json], bool]


def _older_than(max_seconds: int, now: datetime) -> Criterion:
    def check(pod: Json) -> bool:
        return whole_seconds(now - podutil.creation_time(pod)) > max_seconds

    return check


def _in_states(states: set[str], init: bool, ephemeral: bool) -> Criterion:
    def check(pod: Json) -> bool:
        status = pod.get("status") or {}
        if str(status.get("phase") or "") in states or str(status.get("reason") or "") in states:
            return True
        return not states.isdisjoint(state_reasons(container_statuses(pod, init, ephemeral)))

    return check


def _owner_kinds(include: set[str], exclude: set[str]) -> Criterion | None:
    if include:
        return lambda pod: any(ref.get("kind") in include for ref in podutil.owner_refs(pod))
    if exclude:
        return lambda pod: not any(ref.get("kind") in exclude for ref in podutil.owner_refs(pod))
    return None


def _condition_matches(condition: Json, wanted: Json, now: datetime) -> bool:
    for field in ("type", "status", "reason"):
        if wanted.get(field) and condition.get(field) != wanted[field]:
            return False
    min_seconds = wanted.get("minTimeSinceLastTransitionSeconds")
    if min_seconds is None:
        return True
    transitioned = _time(condition.get("lastTransitionTime"))
    if transitioned is None:
        return False
    return whole_seconds(now - transitioned) >= int(min_seconds)


def _in_conditions(filters: list[Json], now: datetime) -> Criterion:
    def check(pod: Json) -> bool:
        conditions = [item for item in (pod.get("status") or {}).get("conditions") or [] if isinstance(item, dict)]
        return any(_condition_matches(condition, wanted, now) for wanted in filters for condition in conditions)

    return check


def _with_exit_codes(codes: set[int], init: bool) -> Criterion:
    return lambda pod: not codes.isdisjoint(exit_codes(container_statuses(pod, init)))


def criteria(args: PodLifeTimeArgs, now: datetime) -> list[Criterion]:
    """The configured criteria, each a predicate every candidate must satisfy."""
    init = args.including_init_containers
    checks: list[Criterion] = []
    if args.max_pod_life_time_seconds is not None:
        checks.append(_older_than(args.max_pod_life_time_seconds, now))
    if args.states:
        checks.append(_in_states(set(args.states), init, args.including_ephemeral_containers))
    by_owner = _owner_kinds(set(args.owner_kinds.include), set(args.owner_kinds.exclude))
    if by_owner is not None:
        checks.append(by_owner)
    if args.conditions:
        checks.append(_in_conditions([dict(item) for item in args.conditions], now))
    if args.exit_codes:
        checks.append(_with_exit_codes(set(args.exit_codes), init))
    return checks


class Implementation:
    """PodLifeTime over the cycle's nodes (see the module contract)."""

    def __init__(self, args: PodLifeTimeArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.criteria = criteria(args, handle.now)

    def _meets_criteria(self, pod: Json) -> bool:
        return all(check(pod) for check in self.criteria)

    def _candidate(self, pod: Json) -> bool:
        handle = self.handle
        return self.accepts(pod) and handle.filter_and(pod, self._meets_criteria) and handle.pre_eviction_filter(pod)

    def deschedule(self, nodes: list[Json]) -> None:
        candidates = [
            pod for node in nodes for pod in self.handle.pods_on_node(node["metadata"]["name"]) if self._candidate(pod)
        ]
        # Go's sort.Slice, as upstream sorts: equal ages of pods listed node by node land where upstream's land
        for pod in sort_slice(candidates, podutil.created_before):
            if self.handle.evict(pod, NAME) is Outcome.TOTAL_LIMIT:
                return
