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

import bisect
import re
from collections.abc import Iterable

from desched.workloads.model import PDB, Workload
from desched.workloads.selectors import Selector, compile_selector

__all__ = ["PDBIndex", "allowed_disruptions", "pdb_selector", "scaled_value"]

_PERCENT = re.compile(r"^[+-]?[0-9]+%$")
_NOTHING = Selector("nil", nil_matches=False)
_LAST = -1  # the order of a view's extra PDB, placed after every other (orders are >= 0)


def pdb_selector(pdb: PDB) -> Selector:
    """The compiled selector of ``pdb`` with the API-version rule for empty selectors applied."""
    compiled = compile_selector(pdb.selector, nil_matches=False)
    if compiled.kind == "empty" and pdb.api_version == "policy/v1beta1":
        return _NOTHING
    return compiled


_Entry = tuple[int, PDB, Selector]  # (order, the PDB, its compiled selector)


class _Bucket:
    __slots__ = ("by_pair", "fallback")

    def __init__(self) -> None:
        self.by_pair: dict[tuple[str, str], list[_Entry]] = {}
        self.fallback: list[_Entry] = []

    def place(self, selector: Selector) -> list[_Entry]:
        """The list a PDB with ``selector`` belongs in: under its first ``matchLabels`` pair, else the fallback."""
        return self.by_pair.setdefault(selector.match_labels[0], []) if selector.match_labels else self.fallback


class PDBIndex:
    """PDBs indexed for :meth:`matching`; building is O(#PDBs), a lookup is O(#labels + candidates).

    :meth:`put` and :meth:`remove` keep the index current one PDB at a time (a cluster watched live): ``order`` (an
    int >= 0) names a PDB and places it among the others as its position in the input would. :meth:`view` answers as
    if one PDB were left out and another came after all the others, without changing the index.
    """

    __slots__ = ("_buckets", "_placed", "evaluations")

    def __init__(self, pdbs: Iterable[PDB] = ()) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self._placed: dict[int, tuple[list[_Entry], _Entry]] = {}
        self.evaluations = 0
        for order, pdb in enumerate(pdbs):
            self.put(pdb, order)

    def put(self, pdb: PDB, order: int) -> None:
        """Index ``pdb`` at ``order``, replacing the PDB put at that order before."""
        self.remove(order)
        selector = pdb_selector(pdb)
        if selector.kind in ("nil", "invalid"):
            return  # matches nothing, never a candidate
        bucket = self._buckets.get(pdb.namespace)
        if bucket is None:
            bucket = self._buckets[pdb.namespace] = _Bucket()
        entries = bucket.place(selector)
        entry = (order, pdb, selector)
        if entries and entries[-1][0] > order:
            bisect.insort(entries, entry, key=_order)
        else:
            entries.append(entry)
        self._placed[order] = (entries, entry)

    def remove(self, order: int) -> None:
        """Forget the PDB put at ``order`` (nothing when there is none)."""
        placed = self._placed.pop(order, None)
        if placed is not None:
            entries, entry = placed
            entries.remove(entry)

    def matching(self, workload: Workload) -> list[PDB]:
        """The PDBs whose selector matches the pods of ``workload`` (template labels, same namespace), in input
        order within each bucket."""
        return self._matching(workload, None, None)

    def view(self, hidden: int | None = None, extra: PDB | None = None, selector: Selector | None = None) -> PDBIndex:
        """This index as if the PDB at order ``hidden`` were absent and ``extra`` (its selector: ``selector`` when the
        caller compiled it, :func:`pdb_selector`) came after every other PDB: a read-only view that shares the
        buckets (valid until the next :meth:`put` or :meth:`remove`)."""
        if selector is None:
            selector = pdb_selector(extra) if extra is not None else _NOTHING
        entry = None if extra is None or selector.kind in ("nil", "invalid") else (_LAST, extra, selector)
        return _View(self, hidden, entry)

    def _matching(self, workload: Workload, hidden: int | None, extra: _Entry | None) -> list[PDB]:
        bucket = self._buckets.get(workload.namespace)
        if extra is not None and extra[1].namespace != workload.namespace:
            extra = None
        if bucket is None:
            if extra is None:
                return []
            bucket = _EMPTY
        labels = workload.labels
        candidates = list(bucket.fallback)
        extra_pair = None
        if extra is not None:
            if extra[2].match_labels:
                extra_pair = extra[2].match_labels[0]
            else:
                candidates.append(extra)
        if bucket.by_pair or extra_pair is not None:
            for pair in labels.items():
                candidates.extend(bucket.by_pair.get(pair, ()))
                if extra is not None and pair == extra_pair:
                    candidates.append(extra)
        found: list[PDB] = []
        for order, pdb, selector in candidates:
            if order == hidden:
                continue
            self.evaluations += 1
            if selector.matches(labels):
                found.append(pdb)
        return found


class _View(PDBIndex):
    """:meth:`PDBIndex.view`."""

    __slots__ = ("_base", "_extra", "_hidden")

    def __init__(self, base: PDBIndex, hidden: int | None, extra: _Entry | None) -> None:
        super().__init__()
        self._base = base
        self._hidden = hidden
        self._extra = extra

    def put(self, pdb: PDB, order: int) -> None:
        raise TypeError("a PDBIndex view is read-only")

    def matching(self, workload: Workload) -> list[PDB]:
        return self._base._matching(workload, self._hidden, self._extra)


def _order(entry: _Entry) -> int:
    return entry[0]


_EMPTY = _Bucket()  # a namespace without PDBs (never written)


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
