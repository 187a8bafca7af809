"""PDB matching does O(n)-ish work: selector evaluations are counted, not timed (bench/workloads.py times it)."""

from __future__ import annotations

import importlib.util
import os

from desched.policy.model import decode
from desched.workloads.model import collect
from desched.workloads.pdb import PDBIndex, pdb_selector
from desched.workloads.scope import evaluate

_BENCH = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, "bench", "workloads.py")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_workloads", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_index_work_is_linear():
    bench = _bench()
    workloads, pdbs = 10_000, 2_000
    inventory = collect(bench.make_documents(workloads, pdbs))
    assert (len(inventory.workloads), len(inventory.pdbs)) == (workloads, pdbs)
    index = PDBIndex(inventory.pdbs)
    found = {w.key: {p.key for p in index.matching(w)} for w in inventory.workloads}
    # Each workload evaluates the few label-less PDBs of its namespace plus the PDBs indexed under its own label
    # pairs; a scan within each namespace would be workloads * pdbs / namespaces = 400,000 evaluations.
    fallback: dict[str, int] = {}
    for pdb in inventory.pdbs:
        if not pdb_selector(pdb).match_labels:
            fallback[pdb.namespace] = fallback.get(pdb.namespace, 0) + 1
    bound = workloads * (max(fallback.values()) + 1) + pdbs
    assert index.evaluations <= bound, (index.evaluations, bound)
    assert index.evaluations * 5 < workloads * pdbs // bench.NAMESPACES

    # Same answers as the naive scan, on a sample.
    compiled = [(p, pdb_selector(p)) for p in inventory.pdbs]
    for workload in inventory.workloads[::97]:
        naive = {p.key for p, s in compiled if p.namespace == workload.namespace and s.matches(workload.labels)}
        assert found[workload.key] == naive

    # evaluate() shares one index and matches each workload at most once, whatever the number of plugins.
    index = PDBIndex(inventory.pdbs)
    verdicts = evaluate(decode(bench.POLICY), inventory, 36, index)
    assert len(verdicts) == 5 * workloads
    assert index.evaluations <= bound, (index.evaluations, bound)
