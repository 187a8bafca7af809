"""An inventory kept current object by object, for a cluster watched live (the admission webhook's cache).

Contract: :meth:`InventoryStore.put` reads one object as :func:`~desched.workloads.model.collect` reads it, under
``key``, the object's ``(kind, namespace, name)``; a put under a known key replaces that object in place (a watch's
MODIFIED event) and :meth:`InventoryStore.remove` forgets it. At any moment the store answers as ``collect`` over
every object put and not removed, in the order of their first put (a key removed and put again comes last), would:

* :meth:`~InventoryStore.inventory`: an :class:`~desched.workloads.model.Inventory` of the given workloads with the
  store's Namespaces, PriorityClasses (and the ``globalDefault`` one), PVCs and StorageClasses (shared, not copied);
* :meth:`~InventoryStore.workload`: a workload at the ``minReplicas`` of the HPAs that target it;
* :attr:`~InventoryStore.index`: the PDBs, a :class:`~desched.workloads.pdb.PDBIndex` in that order, whose
  :meth:`~InventoryStore.order` of a key hides that PDB in a view;
* :meth:`~InventoryStore.selected`: the workloads a PDB selects, found by namespace and label pair
  (:meth:`~InventoryStore.reach`: how many it may select, counted without matching).

Each call costs what its object (its namespace, its selector's label pairs) needs, never a pass over the store.
``priorities`` counts the changes of PriorityClasses (what a compiled :class:`~desched.workloads.scope.EvictionScope`
reads), ``changes`` every put and remove (while it stays, the store answers the same). One object per key (not a
``List``); keys as the API names objects, so two keys never describe the same Namespace, PriorityClass, PVC or
StorageClass. Not thread-safe: the caller serialises.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from desched.workloads.model import PDB, Inventory, Workload, at_hpa_minimum, collect, hpa_target
from desched.workloads.pdb import PDBIndex, pdb_selector
from desched.workloads.selectors import Selector

__all__ = ["InventoryStore", "Key"]

Key = tuple[str, str, str]  # (kind, namespace, name)
_Placed = dict[Key, tuple[int, Workload]]  # key -> (order, workload as read, before any HPA)
_NOTHING = Selector("nil")


class InventoryStore:
    """See the module contract; ``file`` is the file name every object is read under."""

    __slots__ = (
        "_context",
        "_counter",
        "_defaults",
        "_minimums",
        "_namespaces",
        "_pairs",
        "_read",
        "changes",
        "file",
        "index",
        "priorities",
    )

    def __init__(self, file: str = "cluster") -> None:
        self.file = file
        self.index = PDBIndex()
        self.priorities = 0
        self.changes = 0
        self._counter = itertools.count()
        self._read: dict[Key, tuple[int, Inventory]] = {}  # key -> (order, what collect read of the object)
        self._context = Inventory()  # the Namespaces, PriorityClasses, PVCs and StorageClasses
        self._defaults: dict[int, int] = {}  # order -> value of a globalDefault PriorityClass
        self._minimums: dict[tuple[str, str, str], dict[Key, int]] = {}  # HPA target -> HPA key -> minReplicas
        self._namespaces: dict[str, _Placed] = {}  # namespace -> its workloads
        self._pairs: dict[tuple[str, str, str], _Placed] = {}  # (namespace, label, value) -> the workloads with it

    def put(self, key: Key, obj: Any) -> None:
        """Read ``obj`` under ``key`` (see the module contract)."""
        self.changes += 1
        known = self._read.get(key)
        order = known[0] if known is not None else next(self._counter)
        if known is not None:
            self._retract(key, order, known[1])
        read = collect([(self.file, obj)])
        self._read[key] = (order, read)
        self._place(key, order, read)

    def remove(self, key: Key) -> None:
        """Forget the object under ``key`` (nothing when there is none)."""
        self.changes += 1
        known = self._read.pop(key, None)
        if known is not None:
            self._retract(key, *known)

    def keys(self, kind: str) -> list[Key]:
        """The keys of ``kind`` held."""
        return [key for key in self._read if key[0] == kind]

    def order(self, key: Key) -> int | None:
        """The order of the object under ``key`` (None when there is none): a PDB's order in :attr:`index`."""
        known = self._read.get(key)
        return known[0] if known is not None else None

    def workload(self, workload: Workload) -> Workload:
        """``workload`` at the smallest ``minReplicas`` of the HPAs held that target it."""
        minimums = self._minimums.get(hpa_target(workload))
        return at_hpa_minimum(workload, min(minimums.values()) if minimums else None)

    def inventory(self, workloads: Iterable[Workload]) -> Inventory:
        """An inventory of ``workloads`` with the store's context (see the module contract); its ``pdbs`` and
        ``hpas`` are empty: :attr:`index` holds the PDBs, :meth:`workload` applies the HPAs."""
        context = self._context
        inventory = Inventory()
        inventory.workloads = list(workloads)
        inventory.namespaces = context.namespaces
        inventory.priority_classes = context.priority_classes
        inventory.default_priority = context.default_priority
        inventory.pvcs = context.pvcs
        inventory.storage_classes = context.storage_classes
        return inventory

    def selected(self, pdb: PDB | None, selector: Selector | None = None) -> list[Workload]:
        """The workloads held whose pods ``pdb`` selects (its namespace, its selector: ``selector`` when the caller
        compiled it, :func:`~desched.workloads.pdb.pdb_selector`), in order, HPAs applied."""
        selector, candidates = self._candidates(pdb, selector)
        found = sorted((placed for placed in candidates.values() if selector.matches(placed[1].labels)), key=_first)
        return [self.workload(workload) for _, workload in found]

    def reach(self, pdb: PDB | None, selector: Selector | None = None) -> int:
        """At least as many workloads as :meth:`selected` returns (``selector`` as there), counted without matching
        one."""
        return len(self._candidates(pdb, selector)[1])

    def _candidates(self, pdb: PDB | None, selector: Selector | None) -> tuple[Selector, _Placed]:
        """``pdb``'s selector (``selector`` when given) and the workloads it may select: those with the rarest of its
        ``matchLabels`` pairs (every pair must match), else its namespace's."""
        if selector is None:
            selector = pdb_selector(pdb) if pdb is not None else _NOTHING
        if selector.kind in ("nil", "invalid") or pdb is None:
            return selector, {}
        candidates = self._namespaces.get(pdb.namespace, {})
        for label, value in selector.match_labels:
            having = self._pairs.get((pdb.namespace, label, value), {})
            if len(having) < len(candidates):
                candidates = having
        return selector, candidates

    def _place(self, key: Key, order: int, read: Inventory) -> None:
        for workload in read.workloads:
            self._namespaces.setdefault(workload.namespace, {})[key] = (order, workload)
            for label, value in workload.labels.items():
                self._pairs.setdefault((workload.namespace, label, value), {})[key] = (order, workload)
        for pdb in read.pdbs:
            self.index.put(pdb, order)
        for hpa in read.hpas:
            self._minimums.setdefault(hpa.target, {})[key] = hpa.min_replicas
        context = self._context
        context.namespaces.update(read.namespaces)
        context.pvcs.update(read.pvcs)
        context.storage_classes.update(read.storage_classes)
        if read.priority_classes or read.default_priority is not None:
            context.priority_classes.update(read.priority_classes)
            if read.default_priority is not None:
                self._defaults[order] = read.default_priority
            self._priorities_changed()

    def _retract(self, key: Key, order: int, read: Inventory) -> None:
        for workload in read.workloads:
            _discard(self._namespaces, workload.namespace, key)
            for label, value in workload.labels.items():
                _discard(self._pairs, (workload.namespace, label, value), key)
        if read.pdbs:
            self.index.remove(order)
        for hpa in read.hpas:
            _discard(self._minimums, hpa.target, key)
        context = self._context
        for name in read.namespaces:
            context.namespaces.pop(name, None)
        for claim in read.pvcs:
            context.pvcs.pop(claim, None)
        for name in read.storage_classes:
            context.storage_classes.pop(name, None)
        if read.priority_classes or read.default_priority is not None:
            for name in read.priority_classes:
                context.priority_classes.pop(name, None)
            self._defaults.pop(order, None)
            self._priorities_changed()

    def _priorities_changed(self) -> None:
        """``collect`` keeps the value of the last ``globalDefault`` PriorityClass."""
        self._context.default_priority = self._defaults[max(self._defaults)] if self._defaults else None
        self.priorities += 1


def _first(placed: tuple[int, Workload]) -> int:
    return placed[0]


def _discard(table: dict[Any, dict[Key, Any]], at: Any, key: Key) -> None:
    """Remove ``key`` from ``table[at]``, and ``at`` once empty."""
    entries = table.get(at)
    if entries is not None:
        entries.pop(key, None)
        if not entries:
            del table[at]
