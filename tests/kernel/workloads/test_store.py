"""The inventory kept object by object (InventoryStore), the incremental PDB index and the compiled scope answer as
collect(), a fresh PDBIndex and evaluate() over the same objects would, whatever sequence of events built them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desched.workloads import EvictionScope, PDBIndex, collect, evaluate
from desched.workloads.model import Inventory
from desched.workloads.pdb import pdb_selector
from desched.workloads.store import InventoryStore

from .generated import events, key, pdbs, workloads
from .test_scope import model, policy


def replay(steps: list[tuple[bool, dict]]) -> tuple[InventoryStore, dict]:
    """The store after ``steps``, and the objects it should hold, in the order a watch-fed dict keeps them."""
    store, live = InventoryStore(), {}
    for deleted, obj in steps:
        if deleted:
            store.remove(key(obj))
            live.pop(key(obj), None)
        else:
            store.put(key(obj), obj)
            live[key(obj)] = obj
    return store, live


def expected(live: dict) -> Inventory:
    return collect([("cluster", obj) for obj in live.values()])


@settings(max_examples=300, deadline=None)
@given(events)
def test_the_store_answers_as_collect_over_the_objects_it_holds(steps):
    store, live = replay(steps)
    want = expected(live)
    got = store.inventory(())
    assert got.namespaces == want.namespaces
    assert got.priority_classes == want.priority_classes
    assert got.default_priority == want.default_priority
    assert got.pvcs == want.pvcs
    assert got.storage_classes == want.storage_classes
    fresh = PDBIndex(want.pdbs)
    workloads_read = [w for obj in live.values() for w in collect([("cluster", obj)]).workloads]
    assert [store.workload(w) for w in workloads_read] == want.workloads  # HPA minimums applied
    for workload in want.workloads:
        assert store.index.matching(workload) == fresh.matching(workload)
    for budget in want.pdbs:
        selector = pdb_selector(budget)
        chosen = [w for w in want.workloads if w.namespace == budget.namespace and selector.matches(w.labels)]
        assert store.selected(budget) == chosen
        assert store.reach(budget) >= len(chosen)


@settings(max_examples=300, deadline=None)
@given(events, st.data())
def test_a_view_of_the_index_hides_one_pdb_and_puts_another_last(steps, data):
    store, live = replay(steps)
    want = expected(live)
    held = [obj for obj in live.values() if obj["kind"] == "PodDisruptionBudget"]
    hidden = data.draw(st.sampled_from([None, *held]))
    extra = collect([("incoming", data.draw(pdbs()))]).pdbs
    hidden_pdb = collect([("cluster", hidden)]).pdbs[0] if hidden is not None else None
    reference = PDBIndex([budget for budget in want.pdbs if budget != hidden_pdb] + extra)
    view = store.index.view(store.order(key(hidden)) if hidden is not None else None, extra[0] if extra else None)
    for workload in want.workloads + collect([("x", data.draw(workloads()))]).workloads:
        assert view.matching(workload) == reference.matching(workload)


def test_a_pdb_put_again_keeps_its_place_and_one_put_anew_goes_last():
    def budget(name: str, app: str) -> dict:
        selector = {"matchLabels": {"app": app}}
        return {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "a"},
            "spec": {"selector": selector},
        }

    template = {"metadata": {"labels": {"app": "x"}}}
    manifest = {"kind": "Deployment", "metadata": {"name": "d", "namespace": "a"}, "spec": {"template": template}}
    deployment = collect([("f", manifest)]).workloads[0]
    store = InventoryStore()
    for name in ("p1", "p2", "p3"):
        store.put(("PodDisruptionBudget", "a", name), budget(name, "x"))
    store.put(("PodDisruptionBudget", "a", "p1"), budget("p1", "x"))  # MODIFIED: stays first
    assert [p.name for p in store.index.matching(deployment)] == ["p1", "p2", "p3"]
    store.remove(("PodDisruptionBudget", "a", "p2"))
    store.put(("PodDisruptionBudget", "a", "p2"), budget("p2", "x"))  # deleted and created again: last
    assert [p.name for p in store.index.matching(deployment)] == ["p1", "p3", "p2"]
    store.put(("PodDisruptionBudget", "a", "p1"), budget("p1", "y"))  # selects other pods now
    assert [p.name for p in store.index.matching(deployment)] == ["p3", "p2"]


def test_the_last_global_default_priority_class_in_order_is_the_default():
    def priority(name: str, value: int) -> dict:
        metadata = {"name": name}
        return {"kind": "PriorityClass", "metadata": metadata, "value": value, "globalDefault": True}

    store = InventoryStore()
    store.put(("PriorityClass", "default", "low"), priority("low", 1))
    store.put(("PriorityClass", "default", "high"), priority("high", 1000))
    assert store.inventory(()).default_priority == 1000
    store.put(("PriorityClass", "default", "low"), priority("low", 2))  # MODIFIED: still the first
    assert store.inventory(()).default_priority == 1000
    store.remove(("PriorityClass", "default", "high"))
    assert store.inventory(()).default_priority == 2
    store.put(("PriorityClass", "default", "high"), priority("high", 1000))
    assert store.inventory(()).default_priority == 1000
    assert store.inventory(()).priority_classes == {"low": 2, "high": 1000}


PDB_PROTECTED = {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}
OPENED = {"defaultDisabled": ["SystemCriticalPods", "PodsWithLocalStorage"], "extraEnabled": ["PodsWithPVC"]}
POLICIES = [
    policy("RemoveDuplicates", {"namespaces": {"exclude": ["b"]}}),
    policy("PodLifeTime", {"labelSelector": {"matchLabels": {"app": "x"}}}, PDB_PROTECTED),
    policy("LowNodeUtilization", {}, {"priorityThreshold": {"name": "high"}, "minReplicas": 2}),
    policy(
        "RemoveFailedPods", {}, {"namespaceLabelSelector": {"matchLabels": {"tier": "x"}}, "podProtections": OPENED}
    ),
]


@settings(max_examples=200, deadline=None)
@given(events, st.sampled_from(POLICIES))
def test_a_scope_compiled_once_judges_each_workload_as_evaluate_does_over_them_all(steps, chosen):
    store, live = replay(steps)
    inventory = expected(live)
    index = PDBIndex(inventory.pdbs)
    everything = evaluate(model(chosen), inventory, 36, index)
    scope = EvictionScope(model(chosen), inventory, 36)
    assert scope.evaluate(inventory, index) == everything
    for workload in inventory.workloads:
        alone = store.inventory([workload])
        assert scope.evaluate(alone, store.index) == [v for v in everything if v.workload is workload]
