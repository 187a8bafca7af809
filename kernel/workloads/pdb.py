"""PodDisruptionBudget matching and budgets, without a quadratic scan.

Matching follows Kubernetes: a PDB covers a pod in **its own namespace** whose labels match ``spec.selector`` as a
full ``LabelSelector``. A nil selector matches nothing; an empty selector matches every pod of the namespace under
``policy/v1`` and nothing under ``policy/v1beta1`` (the API server converts it to a match-nothing selector); an
invalid selector is skipped (matches nothing), as the descheduler's ``PodsWithoutPDB`` check does.

:class:`PDBIndex` buckets PDBs by namespace, then by one ``matchLabels`` pair: a workload only evaluates the PDBs
indexed under one of its own label pairs, plus the few PDBs without ``matchLabels`` (expressions-only or empty
selectors) kept in a per-namespace fallback list. ``evaluations`` counts selector evaluations, for tests.

:func:`allowed_disruptions` reproduces the disruption controller (``getExpectedPodCount`` + ``updatePdbStatus``):

* ``maxUnavailable`` (int or percentage): ``desiredHealthy = max(0, expected - scaled(maxUnavailable))``;
* ``minAvailable`` integer: ``desiredHealthy = minAvailable``, expected = the number of pods;
* ``minAvailable`` percentage: ``desiredHealthy = scaled(minAvailable)``;
* neither field: ``desiredHealthy`` and ``expected`` stay 0, and the controller writes 0 allowed disruptions;
* ``allowed = healthy - desiredHealthy``, forced to 0 when negative or when ``expected <= 0``.

``scaled`` is ``intstr.GetScaledValueFromIntOrPercent(v, expected, roundUp=true)``: an int as is, ``"N%"`` as
``ceil(N * expected / 100)``, any other string an error (the controller then fails safe to 0 allowed; we return
``None``, "unknown"). Every replica is assumed healthy, since a manifest has no status.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from desched.workloads.model import PDB, Workload
from desched.workloads.selectors import Selector, compile_selector

__all__ = ["PDBIndex", "allowed_disruptions", "pdb_selector", "scaled_value"]

_PERCENT = re.compile(r"^[+-]?[0-9]+%$")
_NOTHING = Selector("nil", nil_matches=False)


def pdb_selector(pdb: PDB) -> Selector:
    """The compiled selector of ``pdb`` with the API-version rule for empty selectors applied."""
    compiled = compile_selector(pdb.selector, nil_matches=False)
    if compiled.kind == "empty" and pdb.api_version == "policy/v1beta1":
        return _NOTHING
    return compiled


class _Bucket:
    __slots__ = ("by_pair", "fallback")

    def __init__(self) -> None:
        self.by_pair: dict[tuple[str, str], list[tuple[PDB, Selector]]] = {}
        self.fallback: list[tuple[PDB, Selector]] = []


class PDBIndex:
    """PDBs indexed for :meth:`matching`; building is O(#PDBs), a lookup is O(#labels + candidates)."""

    __slots__ = ("_buckets", "evaluations")

    def __init__(self, pdbs: Iterable[PDB]) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self.evaluations = 0
        for pdb in pdbs:
            selector = pdb_selector(pdb)
            if selector.kind in ("nil", "invalid"):
                continue  # matches nothing, never a candidate
            bucket = self._buckets.get(pdb.namespace)
            if bucket is None:
                bucket = self._buckets[pdb.namespace] = _Bucket()
            if selector.match_labels:
                bucket.by_pair.setdefault(selector.match_labels[0], []).append((pdb, selector))
            else:
                bucket.fallback.append((pdb, selector))

    def matching(self, workload: Workload) -> list[PDB]:
        """The PDBs whose selector matches the pods of ``workload`` (template labels, same namespace), in input
        order within each bucket."""
        bucket = self._buckets.get(workload.namespace)
        if bucket is None:
            return []
        labels = workload.labels
        found: list[PDB] = []
        candidates = list(bucket.fallback)
        if bucket.by_pair:
            for pair in labels.items():
                candidates.extend(bucket.by_pair.get(pair, ()))
        for pdb, selector in candidates:
            self.evaluations += 1
            if selector.matches(labels):
                found.append(pdb)
        return found


def scaled_value(value: int | str, total: int) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, true)``; ``None`` where Go returns an error."""
    if isinstance(value, int):
        return value
    if not _PERCENT.match(value) or value.endswith("\n"):
        return None
    percent = int(value[:-1])
    return -((-percent * total) // 100)  # ceil without floats


def allowed_disruptions(pdb: PDB, replicas: int | None) -> int | None:
    """Disruptions ``pdb`` allows when it covers ``replicas`` healthy pods of one controller; ``None`` if unknown.

    >>> allowed_disruptions(PDB("ns", "p", "policy/v1", {}, "50%", None, "f", 1, 1), 3)
    1
    """
    if replicas is None:
        return None
    expected = 0
    desired = 0
    if pdb.max_unavailable is not None:
        expected = replicas
        scaled = scaled_value(pdb.max_unavailable, expected)
        if scaled is None:
            return None
        desired = max(expected - scaled, 0)
    elif pdb.min_available is not None:
        if isinstance(pdb.min_available, int):
            desired = pdb.min_available
            expected = replicas
        else:
            expected = replicas
            scaled = scaled_value(pdb.min_available, expected)
            if scaled is None:
                return None
            desired = scaled
    allowed = replicas - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed
