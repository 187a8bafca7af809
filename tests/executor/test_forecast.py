"""``desched simulate --samples N`` (docs/executor-semantics.md#12-listing-orders).

The expected ranges are read off upstream's tie rules, case by case (the docstrings say how), not off desched's
output: each case is small enough that 200 seeded orders reach both ends of its range with a probability above
0.9999, and the seed makes the test repeatable.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.clusters import generate
from bench.simulate import NODE_FIT
from desched.cli import main
from desched.executor.budgets import BudgetCheck
from desched.executor.cluster import Cluster
from desched.executor.evictions import Limits, PodEvictor, SameCycle
from desched.executor.framework import ListingOrder, prepare_policy, run_cycle
from desched.policy.model import decode
from tests.executor.builders import NOW
from tests.executor.test_same_cycle import SPREAD, node, pod, policy

Json = dict[str, Any]
SAMPLES = "200"


def simulate(tmp_path: Path, the_policy: Json | str, objects: list[Json], *options: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``desched simulate`` on ``objects``."""
    policy_file, snapshot = tmp_path / "policy.yaml", tmp_path / "snapshot.json"
    text = the_policy if isinstance(the_policy, str) else yaml.safe_dump(the_policy)
    policy_file.write_text(text, encoding="utf-8")
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot), "--now", NOW.isoformat(), *options]
        )
    return code, out.getvalue(), err.getvalue()


def forecast(tmp_path: Path, the_policy: Json | str, objects: list[Json], *options: str) -> Json:
    code, out, err = simulate(tmp_path, the_policy, objects, "--format", "json", "--jobs", "1", *options)
    assert code == 0, err
    document: Json = json.loads(out)
    return document


def span(spread: Json) -> tuple[int, int]:
    return spread["min"], spread["max"]


def counts(document: Json) -> dict[str, int]:
    return {entry["pod"]: entry["evictedIn"] for entry in document["forecast"]["pods"]}


def _zones(placed: list[str], **spec: Any) -> list[Json]:
    """Nodes a1, a2, a3 in zone A and b1 in zone B, and pods of owner ``own`` spread by zone on ``placed``."""
    objects = [node("a1", zone="A"), node("a2", zone="A"), node("a3", zone="A"), node("b1", zone="B")]
    return objects + [
        pod(f"s-{i}", on, "own", topologySpreadConstraints=[SPREAD], **spec) for i, on in enumerate(placed)
    ]


def test_topology_spread_with_one_eviction_per_node_evicts_the_distinct_nodes_of_the_picked_pods(
    tmp_path: Path,
) -> None:
    """Zone A holds 6 pods (3 on a1, 2 on a2, 1 on a3), zone B none: upstream moves min(6-3, 3-0, ceil(5/2)) = 3 pods
    from the end of zone A's sorted pods. They are listed node by node (nodes in the cycle's order); their sort
    (``sort.Slice``, which for up to 12 elements is an insertion sort) keeps pods without priority in that order, so
    the 3 taken are the last node's pods and the end of the one before: all 3 on a1 (1 node), or pods of 2 nodes
    (a2 + a3, a1 + a3, a1 + a2), never all 3 nodes. With ``maxNoOfPodsToEvictPerNode: 1`` one pod per node goes:
    1 or 2. Every pod is evicted in some orders and left in others."""
    objects = _zones(["a1", "a1", "a1", "a2", "a2", "a3"])
    the_policy = policy(("balance", "RemovePodsViolatingTopologySpreadConstraint", {}), maxNoOfPodsToEvictPerNode=1)
    document = forecast(tmp_path, the_policy, objects, "--samples", SAMPLES)
    assert span(document["forecast"]["evicted"]) == (1, 2)
    assert all(0 < count < int(SAMPLES) for count in counts(document).values()) and len(counts(document)) == 6


def test_topology_spread_takes_pods_where_gos_sort_puts_them(tmp_path: Path) -> None:
    """Zone A holds 20 pods of priority 0 (10 on a1, 6 on a2, 4 on a3), zone B none: upstream moves min(20-10, 10-0,
    ceil(19/2)) = 10 pods from the end of zone A's pods sorted by ``sort.Slice`` with a comparator that is true for
    equal priorities. Go 1.19.8 puts 20 such pods, listed in positions 0-19, in the order
    [1 6 4 19 12 7 9 8 11 15 14 0 2 13 5 3 18 17 16 10]: the 10 taken come from positions {0, 2, 3, 5, 10, 13, 14, 16,
    17, 18}. The pods are listed node by node; over the 6 node orders those positions reach 3 nodes, except for the
    order a2, a3, a1 (a3 at positions 6-9): 2. With ``maxNoOfPodsToEvictPerNode: 1``: 2 or 3 evictions, never 1."""
    objects = _zones(["a1"] * 10 + ["a2"] * 6 + ["a3"] * 4, priority=0)
    the_policy = policy(("balance", "RemovePodsViolatingTopologySpreadConstraint", {}), maxNoOfPodsToEvictPerNode=1)
    document = forecast(tmp_path, the_policy, objects, "--samples", SAMPLES)
    assert span(document["forecast"]["evicted"]) == (2, 3)


def test_low_node_utilization_evicts_as_many_pods_as_the_order_of_their_sizes_allows(tmp_path: Path) -> None:
    """The source (70% cpu: one 900m pod and five 100m pods on 2000m) drains until it is at its 50% target; pods of
    equal priority and QoS come in listing order. The 900m pod first: 1 eviction; four 100m pods first: 4."""
    source = node("src")
    source["status"]["allocatable"]["cpu"] = source["status"]["capacity"]["cpu"] = "2000m"
    target = node("dst")
    target["status"]["allocatable"]["cpu"] = target["status"]["capacity"]["cpu"] = "2000m"
    pods = [pod("big", "src", "big")] + [pod(f"small-{i}", "src", "small") for i in range(5)]
    pods[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "900m"
    args = {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}
    document = forecast(
        tmp_path, policy(("balance", "LowNodeUtilization", args)), [source, target, *pods], "--samples", SAMPLES
    )
    assert span(document["forecast"]["byPlugin"]["LowNodeUtilization"]) == (1, 4)


def test_remove_duplicates_under_a_total_limit_takes_any_duplicate_of_either_owner(tmp_path: Path) -> None:
    """Owners x and y each have 2 pods on node a (node b empty): each keeps ceil(2/2) = 1 there and evicts the other
    one, the pod listed second (a random listing). ``maxNoOfPodsToEvictTotal: 1`` stops after the first owner of a
    map's order: always exactly 1 eviction, and each of the 4 pods evicted in some orders only."""
    objects = [node("a"), node("b")] + [pod(f"{owner}-{i}", "a", owner) for owner in "xy" for i in range(2)]
    the_policy = policy(("balance", "RemoveDuplicates", {}), maxNoOfPodsToEvictTotal=1)
    document = forecast(tmp_path, the_policy, objects, "--samples", SAMPLES)
    assert span(document["forecast"]["evicted"]) == (1, 1)
    assert sorted(counts(document)) == ["x-0", "x-1", "y-0", "y-1"]
    assert all(0 < count < int(SAMPLES) for count in counts(document).values())


def test_inter_pod_anti_affinity_evicts_one_member_of_a_conflicting_pair(tmp_path: Path) -> None:
    """p and q repel each other on one node and tie on priority: the first listed conflicts and goes, and the other
    then conflicts with nothing (upstream drops the evicted pod from its list)."""

    def away_from(app: str) -> Json:
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}

    objects = [
        node("a"),
        node("b"),
        pod("p", "a", "p", affinity=away_from("q")),
        pod("q", "a", "q", affinity=away_from("p")),
    ]
    document = forecast(
        tmp_path, policy(("deschedule", "RemovePodsViolatingInterPodAntiAffinity", {})), objects, "--samples", SAMPLES
    )
    assert span(document["forecast"]["evicted"]) == (1, 1)
    assert set(counts(document)) == {"p", "q"} and sum(counts(document).values()) == int(SAMPLES)


def test_pod_life_time_ties_in_age_share_what_the_total_limit_leaves(tmp_path: Path) -> None:
    """Oldest first: the one older pod always goes; the 4 created in the same second tie (a random listing) for the
    one eviction ``maxNoOfPodsToEvictTotal: 2`` leaves."""
    pods = [pod("oldest", "a", "o")] + [pod(f"tie-{i}", "b", f"t{i}") for i in range(4)]
    pods[0]["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    for each in pods[1:]:
        each["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    lifetime = ("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 86400})
    document = forecast(
        tmp_path, policy(lifetime, maxNoOfPodsToEvictTotal=2), [node("a"), node("b"), *pods], "--samples", SAMPLES
    )
    assert span(document["forecast"]["evicted"]) == (2, 2)
    seen = counts(document)
    assert seen.pop("oldest") == int(SAMPLES) and sorted(seen) == [f"tie-{i}" for i in range(4)]
    assert all(0 < count < int(SAMPLES) for count in seen.values())


BENCH = generate(60, 30)


def test_on_a_bench_cluster_the_plugins_without_ties_have_one_count(tmp_path: Path) -> None:
    """In a real run with no limits and no minReplicas, NodeTaints and NodeAffinity (the first deschedule plugins)
    decide pod by pod on what no eviction changes (Filter, taints, affinity, and node fit, where room is never freed):
    their counts cannot depend on the order. The first sample is the listing order, the run printed."""
    document = forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH), "--samples", "6")
    single = document["summary"]["byPlugin"]
    for plugin in ("RemovePodsViolatingNodeTaints", "RemovePodsViolatingNodeAffinity"):
        assert span(document["forecast"]["byPlugin"][plugin]) == (single[plugin], single[plugin]), plugin
    totals = document["forecast"]["evicted"]
    assert totals["min"] <= document["summary"]["evicted"] <= totals["max"]


def test_the_same_seed_gives_the_same_forecast_and_jobs_do_not_change_it(tmp_path: Path) -> None:
    one = forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH), "--samples", "5", "--seed", "7")
    assert forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH), "--samples", "5", "--seed", "7") == one
    assert forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH), "--samples", "5", "--seed", "7", "--jobs", "2") == one
    assert one["forecast"]["samples"] == 5 and one["forecast"]["seed"] == 7


def test_without_samples_the_output_has_no_forecast_and_the_first_sample_is_that_run(tmp_path: Path) -> None:
    plain = forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH))
    ranged = forecast(tmp_path, NODE_FIT, copy.deepcopy(BENCH), "--samples", "3")
    assert "forecast" not in plain
    assert {key: value for key, value in ranged.items() if key != "forecast"} == plain


def _cycle_evictions(cluster: Cluster, view: SameCycle, order: ListingOrder) -> list[tuple[str, str, str]]:
    prepared = prepare_policy(decode(yaml.safe_load(NODE_FIT)))
    budgets = BudgetCheck(cluster)
    evictor = PodEvictor(cluster, Limits.from_policy(prepared), budgets, view=view)
    with cluster.trial():
        run_cycle(prepared, cluster, NOW, evictor, order=order)
    return [(e.namespace, e.pod, e.plugin) for e in evictor.evictions]


def _state(cluster: Cluster) -> Any:
    """Everything a trial must give back: the pods (same objects, same order), per node, owner counts, sums."""
    return (
        [(uid, id(pod), json.dumps(pod, sort_keys=True)) for uid, pod in cluster.pods.items()],
        {node: [id(pod) for pod in cluster.pods_on_node(node)] for node in cluster.node_by_name},
        {node: [id(pod) for pod in cluster.active_pods_on_node(node)] for node in cluster.node_by_name},
        dict(cluster._owner_counts),
        {node: dict(cluster.requested(node)) for node in cluster.node_by_name},
    )


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), view=st.sampled_from(SameCycle), shuffle=st.integers(0, 3))
def test_a_trial_gives_the_cluster_back_and_a_sample_does_not_depend_on_the_samples_before_it(
    seed: int, view: SameCycle, shuffle: int
) -> None:
    """A sample run after others on one cluster decides as on a fresh copy of the snapshot: the trial undid every
    change, and what the caches kept holds for every order."""
    objects = generate(12, 20, seed=seed % 997 + 1)
    shared = Cluster.from_objects(copy.deepcopy(objects))
    before = _state(shared)
    for earlier in range(3):
        _cycle_evictions(shared, view, ListingOrder(f"{seed}:{earlier}"))
    assert _state(shared) == before
    order_seed = f"{seed}:later:{shuffle}"
    fresh = _cycle_evictions(Cluster.from_objects(copy.deepcopy(objects)), view, ListingOrder(order_seed))
    assert _cycle_evictions(shared, view, ListingOrder(order_seed)) == fresh


def test_the_text_output_shows_the_range_beside_the_single_run(tmp_path: Path) -> None:
    objects = [node("a"), node("b")] + [pod(f"{owner}-{i}", "a", owner) for owner in "xy" for i in range(2)]
    the_policy = policy(("balance", "RemoveDuplicates", {}), maxNoOfPodsToEvictTotal=1)
    code, out, _ = simulate(tmp_path, the_policy, objects, "--samples", "20", "--jobs", "1")
    assert code == 0
    golden = Path(__file__).parent / "golden" / "forecast.txt"
    if os.environ.get("DESCHED_UPDATE_GOLDENS") == "1":
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("options", [("--samples", "0"), ("--samples", "many"), ("--samples", "3", "--jobs", "0")])
def test_bad_sample_options_are_usage_errors(tmp_path: Path, options: tuple[str, ...]) -> None:
    code, out, err = simulate(tmp_path, policy(("balance", "RemoveDuplicates", {})), [node("a"), node("b")], *options)
    assert code == 2 and out == "" and "Traceback" not in err and options[-2] in err


def test_the_docs_show_what_the_bundled_example_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/executor.md's ranged output is the bundled example's (its elided lines aside)."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "docs" / "executor.md").read_text(encoding="utf-8")
    command = "$ desched simulate --policy examples/forecast/policy.yaml --cluster examples/forecast/cluster.yaml"
    block = readme[readme.index(command) :].split("```")[0].splitlines()
    argv = block[0].strip().split()[2:]
    shown = [line[2:] for line in block[1:] if line.strip() and line.strip() != "..."]
    out = io.StringIO()
    monkeypatch.chdir(root)
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--jobs", "1"]) == 0
    printed = out.getvalue().splitlines()
    positions = [printed.index(line) for line in shown]
    assert positions == sorted(positions) and positions[: len(shown) - 1] == list(range(len(shown) - 1))


def test_jobs_are_capped_by_the_usable_cpus_and_the_shuffled_orders() -> None:
    from desched.executor.forecast import pool_size, usable_cpus

    assert 1 <= pool_size(100_000, 500) <= usable_cpus()
    assert pool_size(None, 500) <= usable_cpus()
    assert pool_size(100_000, 3) <= 2
    assert pool_size(4, 1) == 1


def test_simulate_with_a_huge_jobs_forks_no_more_workers_than_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--samples 500 --jobs 100000`` once forked 499 workers; the pool is as large as the CPUs at most."""
    from desched.executor import forecast as module

    sizes: list[int] = []

    class Pool:
        def __init__(self, size: int) -> None:
            sizes.append(size)

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *_: object) -> None:
            return None

        def map(self, function: Any, items: list[str], chunksize: int = 1) -> list[Any]:
            return [function(item) for item in items]

    class Context:
        Pool = staticmethod(lambda size: Pool(size))

    monkeypatch.setattr(module.multiprocessing, "get_context", lambda method: Context())
    monkeypatch.setattr(module.multiprocessing, "get_all_start_methods", lambda: ["fork"])
    objects = [node("a"), node("b")] + [pod(f"x-{i}", "a", "x") for i in range(2)]
    code, _, err = simulate(
        tmp_path, policy(("balance", "RemoveDuplicates", {})), objects, "--samples", "500", "--jobs", "100000"
    )
    assert code == 0, err
    assert sizes and all(size <= module.usable_cpus() for size in sizes)
