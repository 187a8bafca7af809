"""The workload checks of the webhook: DS401-DS406 for Deployments, StatefulSets, ReplicaSets, ReplicationControllers,
Jobs and PodDisruptionBudgets against the active policy and the cached cluster objects.

Contract: :func:`workload_decision` reports what the active policy may evict of the incoming workload unprotected (as
warnings, or denials for the rules in ``Options.deny_rules``); :func:`pdb_decision` reports the workloads a PDB change
or deletion leaves unprotected (warnings); :func:`policy_warnings` says what an updated active policy means for the
cached workloads. Without a cluster view or an active policy everything is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable

from desched.linter.engine import FileResult, lint_repository
from desched.linter.finding import Finding
from desched.webhook.decision import (
    MAX_MESSAGES,
    ClusterView,
    Decision,
    Json,
    Options,
    namespaced_name,
    settings_for,
    skip,
    verdict,
)

__all__ = ["WORKLOAD_KINDS", "WORKLOAD_RULES", "pdb_decision", "policy_warnings", "workload_decision"]

WORKLOAD_RULES = ("DS401", "DS402", "DS403", "DS404", "DS405", "DS406")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Job")


def _object_key(obj: Json) -> tuple[str, str, str]:
    return (str(obj.get("kind", "")), *namespaced_name(obj))


def _repository_findings(
    policy: FileResult, objects: Iterable[Json], incoming: Json | None, options: Options
) -> list[Finding]:
    """DS401-DS406 over the active policy, the cached objects and ``incoming`` (in a file of its own)."""
    settings = settings_for(options, WORKLOAD_RULES)
    cache = FileResult("cluster")
    cache.others = list(objects)
    results = [policy, cache]
    if incoming is not None:
        mine = FileResult("incoming")
        mine.others = [incoming]
        results.append(mine)
    return [f for f in lint_repository(results, settings) if f.suppressed is None]


def _without(objects: list[Json], key: tuple[str, str, str]) -> list[Json]:
    return [obj for obj in objects if _object_key(obj) != key]


def workload_decision(uid: str, kind: str, obj: Json, options: Options, cluster: ClusterView | None) -> Decision:
    policy = cluster.policy() if cluster is not None else None
    if cluster is None or policy is None:
        return Decision(uid, True, "", [], [], kind)
    findings = _repository_findings(policy, _without(cluster.objects(), _object_key(obj)), obj, options)
    mine = [f for f in findings if f.file == "incoming"]
    return verdict(uid, kind, mine, lambda finding: kind, options, [], deny=lambda f: f.rule in options.deny_rules)


def _unprotected(findings: list[Finding]) -> set[str]:
    return {f.object for f in findings if f.rule == "DS401" and f.file == "cluster"}


def pdb_decision(
    uid: str,
    kind: str,
    operation: str,
    obj: Json | None,
    old: Json | None,
    options: Options,
    cluster: ClusterView | None,
) -> Decision:
    if operation != "DELETE" and obj is not None:
        skipped = skip(uid, kind, obj)
        if skipped is not None:
            return skipped
    policy = cluster.policy() if cluster is not None else None
    if policy is None or cluster is None:
        return Decision(uid, True, "", [], [], kind)
    current = obj if operation != "DELETE" else None
    previous = old
    key = _object_key(current or previous or {})
    others = _without(cluster.objects(), key)
    before = _repository_findings(policy, others + ([previous] if previous else []), None, options)
    after = _repository_findings(policy, others, current, options)
    lost = sorted(_unprotected(after) - _unprotected(before))
    warnings = [
        f"DS401 {name}: no PodDisruptionBudget covers it any more after this "
        f"{'deletion' if operation == 'DELETE' else 'change'}"
        for name in lost
    ]
    mine = [f for f in after if f.file == "incoming"]
    return verdict(
        uid,
        kind,
        mine,
        lambda finding: "PodDisruptionBudget",
        options,
        warnings,
        deny=lambda f: f.rule in options.deny_rules,
    )


def policy_warnings(result: FileResult, options: Options, cluster: ClusterView) -> list[str]:
    """What the updated active policy means for the cached workloads (DS401-DS406), as warnings."""
    findings = _repository_findings(result, cluster.objects(), None, options)
    lines = [f"{f.rule} {f.object}: {f.message}" for f in findings]
    if len(lines) > MAX_MESSAGES:
        lines = [*lines[:MAX_MESSAGES], f"and {len(lines) - MAX_MESSAGES} more workload findings"]
    return lines
