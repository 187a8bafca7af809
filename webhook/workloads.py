"""The workload checks of the webhook: DS401-DS406 for Deployments, StatefulSets, ReplicaSets, ReplicationControllers,
Jobs and PodDisruptionBudgets against the active policy and the cached cluster objects, and the deployment rules
(DS6xx) that need nothing but the object for a workload of any kind that runs the descheduler (the deployment model,
:mod:`desched.deployment.runs`, reads the one table of workload kinds, as these checks do).

Contract: :func:`workload_decision` reports what the active policy may evict of the incoming workload unprotected, and
what is wrong with the incoming descheduler workload itself (as warnings, or denials for the rules in
``Options.deny_rules``); :func:`pdb_decision` reports the workloads a PDB change or deletion leaves unprotected
(warnings); :func:`policy_warnings` says what an updated active policy means for the cached workloads. Without a
cluster view or an active policy only the descheduler workload's own checks run.

The rules are those whose metadata marks them admission-capable (:data:`WORKLOAD_RULES`). The deployment rules among
them judge the incoming object alone (:func:`~desched.linter.engine.deployment_findings`: its ``desched.io/ignore``
annotation suppresses as in ``desched lint``), and not an object a controller owns (a CronJob's Jobs, a ReplicaSet's
Pods: their owner was judged when it was admitted). For the repository rules, a decision is what
:func:`~desched.linter.engine.check_inventory` finds about the incoming object (its ``focus``) in a
:class:`~desched.linter.inventory.Repository` of the active policy (its effective form, computed once when the policy
was linted) and every cached object; but a view that keeps a :class:`ClusterIndex` (:class:`Indexed`: the webhook's
cache) is not read whole: a workload request judges the incoming workload alone, a PDB request the workloads its old
and new selectors pick in their namespace (each selector compiled and matched once a request, :func:`change_of`),
against the policy's eviction scopes compiled once per policy change. What a request costs grows with that object's
namespace and selectors, not with the cluster. ``reference=True`` (and an object whose ``kind`` is not the request's,
which the API server never sends, or a view without an index) decides over every cached object instead; the tests
hold the two to the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from desched.deployment.runs import descheduler_runs
from desched.linter.engine import FileResult, Settings, check_inventory, deployment_findings
from desched.linter.finding import Finding
from desched.linter.inventory import PolicyGroup, Repository, concerning, policy_groups
from desched.linter.rules import admission_rules
from desched.tree import list_or_empty, mapping_or_empty
from desched.webhook.decision import (
    ClusterView,
    Decision,
    Json,
    Options,
    capped,
    namespaced_name,
    settings_for,
    skip,
    verdict,
)
from desched.workloads import PDB, InventoryStore, PDBIndex, Workload, collect
from desched.workloads.model import WORKLOAD_KINDS
from desched.workloads.pdb import pdb_selector
from desched.workloads.store import Key

__all__ = [
    "ADMITTED_KINDS",
    "REPOSITORY_KINDS",
    "WORKLOAD_RULES",
    "Change",
    "ClusterIndex",
    "Indexed",
    "bounded",
    "change_of",
    "object_key",
    "own_findings",
    "pdb_decision",
    "policy_warnings",
    "workload_decision",
]

WORKLOAD_RULES = tuple(module.ID for module in admission_rules())
#: The workload kinds the repository rules judge at admission: every one the webhook is sent (deploy/webhook) but a
#: CronJob, sent for the deployment rules alone (the Jobs it creates are judged); not a DaemonSet nor a Pod.
REPOSITORY_KINDS = tuple(kind for kind in WORKLOAD_KINDS if kind not in ("CronJob", "DaemonSet", "Pod"))
#: What :func:`workload_decision` judges: every workload kind (the descheduler may run in any of them), the
#: repository rules' first.
ADMITTED_KINDS = (*REPOSITORY_KINDS, *(kind for kind in WORKLOAD_KINDS if kind not in REPOSITORY_KINDS))
#: The sources findings name (their file): the cached objects, the request's. Findings are told apart by their
#: subject (:func:`~desched.linter.inventory.concerning`), never by these names.
CACHED, INCOMING = "cluster", "incoming"
INLINE_WORKLOADS = 32
#: How many times :data:`INLINE_WORKLOADS` workloads a PDB's selectors may have to be matched against (those of its
#: namespace, for a selector without ``matchLabels``) to count those they select: about 0.5 us each, a fraction of
#: what the hand-off to a thread costs, and of the time a thread waits for the event loop to let go of the GIL.
MATCHED = 8


def object_key(obj: Json) -> Key:
    """``(kind, namespace, name)`` of a cached or incoming object (namespace ``default`` when it has none)."""
    return (str(obj.get("kind", "")), *namespaced_name(obj))


class ClusterIndex:
    """The cached objects as the workload checks read them: :attr:`store` (every cached object, kept current by the
    cache on each watch event) and the active policy's eviction scopes, compiled once per policy or PriorityClass
    change. Not thread-safe: the cache serialises (:meth:`Indexed.indexed`)."""

    def __init__(self) -> None:
        self.store = InventoryStore(CACHED)
        self._compiled: tuple[FileResult, int, list[PolicyGroup]] | None = None

    def groups(self, policy: FileResult) -> list[PolicyGroup]:
        """``policy``'s policies grouped by eviction scope as lint groups them, compiled (the scope's clock is never
        read: templates have no start time for ``minPodAge``)."""
        compiled = self._compiled
        if compiled is None or compiled[0] is not policy or compiled[1] != self.store.priorities:
            groups = policy_groups(policy.runs(), self.store.inventory(()))
            compiled = self._compiled = (policy, self.store.priorities, groups)
        return compiled[2]

    def repository(self, policy: FileResult, workloads: Iterable[Workload], pdbs: PDBIndex | None = None) -> Repository:
        """The repository of ``policy`` and ``workloads`` (cached or not), with the cached PDBs (``pdbs``: a view of
        them) and the groups compiled for ``policy``."""
        inventory = self.store.inventory(workloads)
        return Repository(policy.runs(), inventory, pdbs if pdbs is not None else self.store.index, self.groups(policy))


@runtime_checkable
class Indexed(Protocol):
    """A cluster view that keeps a :class:`ClusterIndex`."""

    def indexed(self) -> AbstractContextManager[ClusterIndex]:
        """The index, held still (no watch event applied to it) until the block ends."""
        ...


_SETTINGS: dict[int, tuple[Options, Settings]] = {}


def _settings(options: Options) -> Settings:
    """The engine settings of the workload rules under ``options``, made once per ``options`` object (settings hold
    mappings, so they are not hashable keys)."""
    cached = _SETTINGS.get(id(options))
    if cached is None or cached[0] is not options:
        if len(_SETTINGS) >= 16:
            _SETTINGS.clear()
        cached = _SETTINGS[id(options)] = (options, settings_for(options, WORKLOAD_RULES))
    return cached[1]


def _first_pdb(file: str, obj: Json | None) -> PDB | None:
    pdbs = collect([(file, obj)]).pdbs if obj is not None else []
    return pdbs[0] if pdbs else None


class Change:
    """What a PDB request changes: the new PDB (:data:`INCOMING`) and the old one (:data:`CACHED`), each with its
    compiled selector (None without the PDB), and the workloads they select, matched once while the store stays
    the same (:attr:`InventoryStore.changes`)."""

    __slots__ = ("_selected", "new", "new_selector", "old", "old_selector")

    def __init__(self, new: PDB | None, old: PDB | None) -> None:
        self.new, self.old = new, old
        self.new_selector = pdb_selector(new) if new is not None else None
        self.old_selector = pdb_selector(old) if old is not None else None
        self._selected: tuple[InventoryStore, int, list[Workload]] | None = None

    def reach(self, store: InventoryStore) -> int:
        """:meth:`InventoryStore.reach` of both PDBs."""
        return store.reach(self.new, self.new_selector) + store.reach(self.old, self.old_selector)

    def selected(self, store: InventoryStore) -> list[Workload]:
        """:meth:`InventoryStore.selected` of the new PDB, then of the old one (a list shared, not to be changed)."""
        known = self._selected
        if known is None or known[0] is not store or known[1] != store.changes:
            found = store.selected(self.new, self.new_selector) + store.selected(self.old, self.old_selector)
            known = self._selected = (store, store.changes, found)
        return known[2]


#: The last :class:`Change` read, with the request objects it was read from (held, so their ids stay theirs).
_LAST_CHANGE: dict[str, tuple[Json | None, Json | None, Change]] = {}


def change_of(current: Json | None, previous: Json | None) -> Change:
    """The :class:`Change` of a PDB request's ``current`` (None for a deletion) and ``previous`` objects, read and
    compiled once for the request: :func:`bounded` and :func:`pdb_decision` of the same objects share it (told by
    identity: a request's objects are never changed once decoded)."""
    last = _LAST_CHANGE.get("last")
    if last is not None and last[0] is current and last[1] is previous:
        return last[2]
    change = Change(_first_pdb(INCOMING, current), _first_pdb(CACHED, previous))
    _LAST_CHANGE["last"] = (current, previous, change)
    return change


def _indexed_workload(index: ClusterIndex, policy: FileResult, obj: Json, options: Options) -> list[Finding]:
    """The incoming workload's findings, judged alone (no other workload changes them)."""
    subjects = [index.store.workload(workload) for workload in collect([(INCOMING, obj)]).workloads]
    return check_inventory(index.repository(policy, subjects), _settings(options), focus=subjects)


def _indexed_pdb(
    index: ClusterIndex, policy: FileResult, current: Json | None, previous: Json | None, options: Options
) -> tuple[list[Finding], list[str]]:
    """The incoming PDB's findings, and the workloads DS401 reports after the change and not before. Only the
    workloads the old or the new PDB selects can differ; DS401 reported none of those the old one selected before
    the change (a PDB covered them), and none the new one selects after: what it reports after is what is lost."""
    store = index.store
    hidden = store.order(object_key(current or previous or {}))
    change = change_of(current, previous)
    affected = {workload.key: workload for workload in change.selected(store)}
    pdbs = store.index.view(hidden, change.new, change.new_selector)
    found = check_inventory(index.repository(policy, affected.values(), pdbs), _settings(options))
    return _about(found, change.new), sorted(_unprotected(found))


def bounded(request: Json, cluster: ClusterView | None, most: int = INLINE_WORKLOADS) -> bool:
    """Whether :func:`~desched.webhook.review.decide` answers ``request`` from the index, judging at most ``most``
    workloads: a workload request, or a PDB request whose old and new selectors select ``most`` workloads in all
    (counted without matching when they may select no more; matched when they may select at most
    :data:`MATCHED` times ``most``), of the kind the API server sends, against a view with an index. Such a decision
    costs about 0.1 ms a workload judged, little enough for the event loop. False for every other request."""
    kind = str(mapping_or_empty(request.get("kind")).get("kind", ""))
    indexed = _indexed(cluster) if cluster is not None else None
    current, previous = request.get("object"), request.get("oldObject")
    if indexed is None or kind not in (*REPOSITORY_KINDS, "PodDisruptionBudget"):
        return False
    if kind != "PodDisruptionBudget":
        return _plain(current, kind)
    if request.get("operation") == "DELETE":
        current = None
    if not (_plain(current, kind) and _plain(previous, kind)):
        return False
    change = change_of(current, previous)
    with indexed() as index:
        store = index.store
        reach = change.reach(store)
        return reach <= most or (reach <= MATCHED * most and len(change.selected(store)) <= most)


def _cluster_findings(
    policy: FileResult, objects: Iterable[Json], incoming: Json | None, options: Options
) -> tuple[Repository, list[Finding]]:
    """The repository of the active policy, the cached ``objects`` and ``incoming`` (under :data:`INCOMING`), and
    what the admission rules find in it."""
    sources = [(CACHED, obj) for obj in objects]
    if incoming is not None:
        sources.append((INCOMING, incoming))
    repo = Repository.of(policy.runs(), sources)
    return repo, check_inventory(repo, _settings(options))


def _about(findings: list[Finding], subject: Json | PDB | None) -> list[Finding]:
    """The ``findings`` about the request's ``subject`` (a PDB, or the workloads of an object), sorted."""
    if subject is None:
        return []
    subjects: list[Workload | PDB] = (
        [subject] if isinstance(subject, PDB) else [*collect([(INCOMING, subject)]).workloads]
    )
    return concerning(findings, subjects)


def _without(objects: list[Json], key: Key) -> list[Json]:
    return [obj for obj in objects if object_key(obj) != key]


def _indexed(cluster: ClusterView) -> Callable[[], AbstractContextManager[ClusterIndex]] | None:
    """``cluster.indexed`` when the view is :class:`Indexed` (read without ``isinstance``, which costs more on a
    protocol than the rest of a decision)."""
    indexed = getattr(cluster, "indexed", None)
    return indexed if callable(indexed) else None


def _plain(obj: Any, kind: str) -> bool:
    """Whether ``obj`` is absent or of the request's kind, as the API server sends it."""
    return obj is None or (isinstance(obj, dict) and obj.get("kind") == kind)


def workload_decision(
    uid: str,
    kind: str,
    obj: Json,
    options: Options,
    cluster: ClusterView | None,
    *,
    reference: bool = False,
    own: list[Finding] | None = None,
) -> Decision:
    """The decision on the workload ``obj`` (see the module contract; ``reference``: over every cached object;
    ``own``: :func:`own_findings` of ``obj``, when made elsewhere)."""
    own = own_findings(kind, obj, options) if own is None else own
    policy = cluster.policy() if cluster is not None else None
    mine: list[Finding] = []
    if cluster is not None and policy is not None and kind in REPOSITORY_KINDS:
        indexed = None if reference or not _plain(obj, kind) else _indexed(cluster)
        if indexed is not None:
            with indexed() as index:
                mine = _indexed_workload(index, policy, obj, options)
        else:
            _, findings = _cluster_findings(policy, _without(cluster.objects(), object_key(obj)), obj, options)
            mine = _about(findings, obj)
    found = sorted(own + mine, key=Finding.sort_key) if own else mine
    return verdict(uid, kind, found, lambda finding: kind, options, [], deny=lambda f: f.rule in options.deny_rules)


def own_findings(kind: str, obj: Json, options: Options) -> list[Finding]:
    """What the admission-capable deployment rules (DS6xx) find in the incoming ``obj`` alone, but what its
    ``desched.io/ignore`` annotation suppresses: nothing unless it may run the descheduler and no controller owns it."""
    if kind not in WORKLOAD_KINDS or _controlled(obj):
        return []
    subject = obj if "kind" in obj else {**obj, "kind": kind}  # the API server sends it; a bare object is the request's
    if next(descheduler_runs([(INCOMING, subject)]), None) is None:
        return []  # the deployment rules judge the descheduler's containers: none, nothing to find
    return [f for f in deployment_findings(INCOMING, subject, _settings(options)) if f.suppressed is None]


def _controlled(obj: Json) -> bool:
    """Whether a controller owns ``obj`` (an ``ownerReferences`` entry with ``controller: true``)."""
    owners = mapping_or_empty(obj.get("metadata")).get("ownerReferences")
    listed = list_or_empty(owners)
    return any(isinstance(owner, dict) and owner.get("controller") is True for owner in listed)


def _unprotected(findings: list[Finding]) -> set[str]:
    """The workloads DS401 reports (a PDB request brings no workload: each is a cached one)."""
    return {f.object for f in findings if f.rule == "DS401"}


def _lost(repo: Repository, after: list[Finding], previous: Json | None) -> list[str]:
    """The workloads DS401 reports after a PDB change and not before, from the findings after it alone: the old PDB
    covered each workload it selects, so DS401 reported none of those before the change; every other workload kept
    its coverage, hence its evictability, hence its DS401 finding."""
    old = _first_pdb(CACHED, previous)
    if old is None:
        return []
    index = PDBIndex([old])
    selected = {workload.label for workload in repo.inventory.workloads if index.matching(workload)}
    return sorted(_unprotected(after) & selected)


def pdb_decision(
    uid: str,
    kind: str,
    operation: str,
    obj: Json | None,
    old: Json | None,
    options: Options,
    cluster: ClusterView | None,
    *,
    reference: bool = False,
) -> Decision:
    """The decision on a PDB write or deletion (see the module contract; ``reference``: over every cached object)."""
    if operation != "DELETE" and obj is not None:
        skipped = skip(uid, kind, obj)
        if skipped is not None:
            return skipped
    policy = cluster.policy() if cluster is not None else None
    if policy is None or cluster is None:
        return Decision(uid, True, "", [], [], kind)
    current = obj if operation != "DELETE" else None
    previous = old
    indexed = None if reference or not (_plain(current, kind) and _plain(previous, kind)) else _indexed(cluster)
    if indexed is not None:
        with indexed() as index:
            mine, lost = _indexed_pdb(index, policy, current, previous, options)
    else:
        others = _without(cluster.objects(), object_key(current or previous or {}))
        repo, after = _cluster_findings(policy, others, current, options)
        mine, lost = _about(after, _first_pdb(INCOMING, current)), _lost(repo, after, previous)
    warnings = [
        f"DS401 {name}: no PodDisruptionBudget covers it any more after this "
        f"{'deletion' if operation == 'DELETE' else 'change'}"
        for name in lost
    ]
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
    _, findings = _cluster_findings(result, cluster.objects(), None, options)
    return capped([f"{f.rule} {f.object}: {f.message}" for f in findings], "workload findings")
