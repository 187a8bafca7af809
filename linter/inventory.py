"""The repository rules' view of policies meeting objects (DS401-DS407): the public inventory API.

:class:`Repository` holds the policies of a run (each a :class:`CheckedPolicy`: the document, the release it is
checked against and its effective form), an :class:`~desched.workloads.Inventory` of workloads, PDBs, HPAs and
PriorityClasses, and its PDB index. Policies that evict alike form one :class:`PolicyGroup`, whose eviction scope is
compiled once (:func:`policy_groups`) and evaluated once per repository. Lint builds a repository per cluster of files
(:meth:`Repository.of`); the admission webhook builds one of its cached objects, or of the few a request concerns,
with groups it compiled once per policy change, and reads what the rules find about the request's object
(:func:`desched.linter.engine.check_inventory` with ``focus``, matched by :func:`concerning`). Repository rules
(``SCOPE = "repository"``) yield :class:`RepoHit` values that carry their own file and position, because a finding
points at a workload or a PDB, not at the policy.
"""

from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple

from desched.gitops.documents import PolicyDoc
from desched.linter.finding import Finding
from desched.linter.rules._base import CheckedPolicy, RepoHit
from desched.policy.model import Policy
from desched.workloads import (
    PDB,
    EvictionScope,
    Inventory,
    PDBIndex,
    Summary,
    Verdict,
    Workload,
    collect,
    signature,
    summarize,
)
from desched.workloads.model import objects

__all__ = [
    "Analysis",
    "CheckedPolicy",
    "PolicyGroup",
    "RepoHit",
    "Repository",
    "Targeted",
    "concerning",
    "policy_groups",
]


class PolicyGroup(NamedTuple):
    """The policies of a run that evict alike (the same :func:`~desched.workloads.signature`: plugins, namespaces,
    selectors, owner kinds, DefaultEvictor args, target release), with their eviction ``scope`` compiled against an
    inventory's PriorityClasses (compile again when they change). The scope's clock is read when it is compiled."""

    docs: list[PolicyDoc]
    policy: Policy  # the effective policy (v1alpha1 documents converted, KubeDeschedulers rendered)
    target: int
    scope: EvictionScope


def policy_groups(runs: Iterable[CheckedPolicy], inventory: Inventory) -> list[PolicyGroup]:
    """``runs`` grouped by eviction scope, in the order each group's first policy comes, each scope compiled once
    against ``inventory``."""
    groups: dict[str, PolicyGroup] = {}
    for run in runs:
        policy, target = run.effective.policy, run.release.target
        key = signature(policy, target)
        group = groups.get(key)
        if group is None:
            group = groups[key] = PolicyGroup([], policy, target, EvictionScope(policy, inventory, target))
        group.docs.append(run.doc)
    return list(groups.values())


class Analysis(NamedTuple):
    """The eviction scope of one :class:`PolicyGroup` evaluated over the repository's workloads; ``docs`` lists
    every policy of the group."""

    docs: list[PolicyDoc]
    policy: Policy
    target: int
    verdicts: list[Verdict]
    summaries: dict[str, Summary]

    def label(self) -> str:
        first = self.docs[0]
        more = f" and {len(self.docs) - 1} more with the same scope" if len(self.docs) > 1 else ""
        return f"{first.object} ({first.file}){more}"


class Targeted(NamedTuple):
    """A workload that at least one policy may evict, with the first analysis that may (and how many do)."""

    workload: Workload
    analysis: Analysis
    summary: Summary
    policies: int

    def who(self, *, by_profile: bool = False) -> str:
        """``profile/plugin`` pairs of the first policy (``by_profile``: each profile named once, with its plugins),
        and how many other policies target the workload."""
        others = self.policies - len(self.analysis.docs)
        tail = f" (and {others} other {'policy' if others == 1 else 'policies'})" if others > 0 else ""
        named = _by_profile(self.summary.targeted_by) if by_profile else ", ".join(self.summary.targeted_by)
        return f"{named} of {self.analysis.label()}{tail}"


def _by_profile(pairs: Iterable[str]) -> str:
    """``profile/plugin`` pairs as ``profile a (X, Y), profile b (X)``, each name once, in first-seen order; a profile
    that names its only plugin itself (``strategy-X-profile``, as v1alpha1 strategies convert) is named alone."""
    plugins: dict[str, dict[str, None]] = {}
    for pair in pairs:
        profile, _, plugin = pair.partition("/")
        plugins.setdefault(profile, {})[plugin] = None
    return ", ".join(
        f"profile {profile}"
        if len(names) == 1 and next(iter(names)) in profile
        else f"profile {profile} ({', '.join(names)})"
        for profile, names in plugins.items()
    )


class Repository:
    """Policies meeting an inventory. ``index`` is the inventory's PDB index (built from ``inventory.pdbs`` when not
    given: a caller that keeps one current passes it); ``groups`` the policies' groups when the caller compiled them
    (:func:`policy_groups` over ``policies``); ``documents`` every ``(file, object)`` of the run, for rules that read
    more than workloads and PDBs."""

    def __init__(
        self,
        policies: Iterable[CheckedPolicy],
        inventory: Inventory,
        index: PDBIndex | None = None,
        groups: Sequence[PolicyGroup] | None = None,
        documents: Iterable[tuple[str, Any]] = (),
    ) -> None:
        self.policies = list(policies)
        self.inventory = inventory
        self.index = index if index is not None else PDBIndex(inventory.pdbs)
        self.documents = list(documents)
        self._groups = groups
        self._analyses: list[Analysis] | None = None
        self._targeted: list[Targeted] | None = None
        self._pdbs: dict[int, tuple[Workload, list[PDB]]] = {}  # id of a workload -> it, the PDBs covering it

    @classmethod
    def of(cls, policies: Iterable[CheckedPolicy], documents: Iterable[tuple[str, Any]]) -> "Repository":
        """The repository of a lint run: ``policies`` and the inventory of every other ``(file, document)`` (lists
        flattened)."""
        flattened = list(objects(documents))
        return cls(policies, collect(flattened), documents=flattened)

    def analyses(self) -> list[Analysis]:
        """One analysis per group of policies with the same scope (nothing when there are no workloads)."""
        if self._analyses is None:
            self._analyses = []
            if self.inventory.workloads:
                groups = self._groups if self._groups is not None else policy_groups(self.policies, self.inventory)
                for group in groups:
                    verdicts = group.scope.evaluate(self.inventory, self.index)
                    self._analyses.append(
                        Analysis(group.docs, group.policy, group.target, verdicts, summarize(verdicts))
                    )
        return self._analyses

    def targeted(self) -> list[Targeted]:
        """Every workload some policy may evict, once, in inventory order."""
        if self._targeted is None:
            first: dict[str, tuple[Analysis, Summary]] = {}
            counts: dict[str, int] = {}
            for analysis in self.analyses():
                for key, summary in analysis.summaries.items():
                    if summary.evictable:
                        first.setdefault(key, (analysis, summary))
                        counts[key] = counts.get(key, 0) + len(analysis.docs)
            self._targeted = [
                Targeted(workload, *first[workload.key], counts[workload.key])
                for workload in self.inventory.workloads
                if workload.key in first
            ]
        return self._targeted

    def pdbs(self, workload: Workload) -> list[PDB]:
        """The PDBs covering ``workload``'s pods (:meth:`PDBIndex.matching`), matched once per workload (several rules
        ask); the list is shared, not to be changed."""
        known = self._pdbs.get(id(workload))
        if known is None or known[0] is not workload:
            known = self._pdbs[id(workload)] = (workload, self.index.matching(workload))
        return known[1]


def concerning(findings: Iterable[Finding], subjects: Collection[Workload | PDB]) -> list[Finding]:
    """The ``findings`` about one of ``subjects`` (the finding's file and object are the subject's), sorted."""
    about = {(subject.file, subject.label) for subject in subjects}
    return sorted({f for f in findings if (f.file, f.object) in about}, key=Finding.sort_key)
