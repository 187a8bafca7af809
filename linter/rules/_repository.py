"""The repository pass: rules that need policies and workloads from several files at once (DS401-DS407).

:class:`Repository` gathers every policy and every other document of a lint run, builds the workload inventory
and the PDB index once, and evaluates each policy's eviction scope once (:mod:`desched.workloads`). Repository
rules (``SCOPE = "repository"``) yield :class:`RepoHit` values that carry their own file and position, because a
finding points at a workload or a PDB, not at the policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from desched.documents import PolicyDoc
from desched.linter.rules._base import RepoHit
from desched.policy.effective import Effective
from desched.policy.model import Policy
from desched.workloads import (
    PDB,
    Inventory,
    PDBIndex,
    Summary,
    Verdict,
    Workload,
    collect,
    evaluate,
    signature,
    summarize,
)
from desched.workloads.model import objects

__all__ = ["Analysis", "RepoHit", "Repository", "Targeted"]


class Analysis(NamedTuple):
    """The eviction scope of one group of policies that evict alike, over the repository's workloads.

    Policies whose scope-relevant content is identical (plugins, namespaces, selectors, owner kinds, DefaultEvictor
    args, target release) are evaluated once; ``docs`` lists them all.
    """

    docs: list[PolicyDoc]
    policy: Policy  # the effective policy evaluated (v1alpha1 documents converted, KubeDeschedulers rendered)
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

    def who(self) -> str:
        """``profile/plugin`` pairs of the first policy, and how many other policies target the workload."""
        others = self.policies - len(self.analysis.docs)
        tail = f" (and {others} other {'policy' if others == 1 else 'policies'})" if others > 0 else ""
        return f"{', '.join(self.summary.targeted_by)} of {self.analysis.label()}{tail}"


class Repository:
    """Policies (with their target release and their effective form, :class:`~desched.policy.effective.Effective`)
    and the inventory of every other document of a run."""

    def __init__(
        self, policies: Iterable[tuple[PolicyDoc, int, Effective]], documents: Iterable[tuple[str, Any]]
    ) -> None:
        self.policies = list(policies)
        self.documents = list(objects(documents))  # (file, object), lists flattened: for rules beyond workloads
        self.inventory: Inventory = collect(self.documents)
        self.index = PDBIndex(self.inventory.pdbs)
        self._analyses: list[Analysis] | None = None
        self._targeted: list[Targeted] | None = None

    def analyses(self) -> list[Analysis]:
        """One analysis per group of policies with the same scope (nothing when there are no workloads)."""
        if self._analyses is None:
            groups: dict[str, tuple[Policy, int, list[PolicyDoc]]] = {}
            if self.inventory.workloads:
                for doc, target, effective in self.policies:
                    key = signature(effective.policy, target)
                    groups.setdefault(key, (effective.policy, target, []))[2].append(doc)
            self._analyses = []
            for policy, target, docs in groups.values():
                verdicts = evaluate(policy, self.inventory, target, self.index)
                self._analyses.append(Analysis(docs, policy, target, verdicts, summarize(verdicts)))
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
        return self.index.matching(workload)
