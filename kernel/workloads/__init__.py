"""Workload safety: the eviction scope model, pure and offline (no cluster access).

* :mod:`.selectors`: label selector matching with Kubernetes semantics;
* :mod:`.model`: :func:`collect` reads workloads, PDBs, HPAs, Namespaces, PriorityClasses, PVCs and StorageClasses
  from manifests into an :class:`Inventory`;
* :mod:`.pdb`: :class:`PDBIndex` (sub-quadratic PDB matching) and :func:`allowed_disruptions`;
* :mod:`.eviction`: the DefaultEvictor's decision about one pod, shared by the scope model and the executor;
* :mod:`.scope`: :func:`evaluate` decides per workload and plugin whether the plugin may evict its pods, with reasons
  (:class:`EvictionScope`: a policy compiled once, to judge workloads as they come);
* :mod:`.store`: :class:`InventoryStore`, an inventory kept current object by object (a cluster watched live).
"""

from __future__ import annotations

from desched.workloads.model import HPA, PDB, Inventory, Workload, collect
from desched.workloads.pdb import PDBIndex, allowed_disruptions
from desched.workloads.scope import EvictionScope, Summary, Verdict, evaluate, signature, summarize
from desched.workloads.selectors import Selector, compile_selector, matches
from desched.workloads.store import InventoryStore

__all__ = [
    "HPA",
    "PDB",
    "EvictionScope",
    "Inventory",
    "InventoryStore",
    "PDBIndex",
    "Selector",
    "Summary",
    "Verdict",
    "Workload",
    "allowed_disruptions",
    "collect",
    "compile_selector",
    "evaluate",
    "matches",
    "signature",
    "summarize",
]
