"""The indexed workload checks decide exactly as the reference (DS401-DS406 over every cached object) does, and read
only what the incoming object's namespace and selectors need; the cache keeps its index through watches and lists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.linter.engine import Settings
from desched.runtime.kube import Served
from desched.webhook import state
from desched.webhook import workloads as checks
from desched.webhook.decision import Decision, Options
from desched.webhook.review import decide
from desched.webhook.state import ClusterCache
from desched.webhook.workloads import REPOSITORY_KINDS, WORKLOAD_RULES, Indexed
from desched.workloads import EvictionScope
from desched.workloads import pdb as pdb_module
from desched.workloads import store as store_module

from ..kernel.workloads.generated import events, pdbs, workloads

Json = dict[str, Any]
V1ALPHA2 = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n"
EVICTING = (
    V1ALPHA2
    + """- name: default
  pluginConfig:
  - name: DefaultEvictor
    args: {minReplicas: 2}
  - name: RemoveDuplicates
    args: {namespaces: {exclude: [b]}}
  - name: RemovePodsViolatingNodeTaints
  plugins:
    balance: {enabled: [RemoveDuplicates]}
    deschedule: {enabled: [RemovePodsViolatingNodeTaints]}
"""
)
PROTECTED = (
    V1ALPHA2
    + """- name: safe
  pluginConfig:
  - name: DefaultEvictor
    args:
      podProtections: {extraEnabled: [PodsWithoutPDB, PodsWithPVC]}
      labelSelector: {matchExpressions: [{key: tier, operator: NotIn, values: ["y"]}]}
      priorityThreshold: {name: high}
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 60}
  plugins:
    deschedule: {enabled: [PodLifeTime]}
"""
)
OPEN = (
    V1ALPHA2
    + """- name: open
  pluginConfig:
  - name: DefaultEvictor
    args:
      podProtections: {defaultDisabled: [SystemCriticalPods, PodsWithLocalStorage]}
      namespaceLabelSelector: {matchLabels: {app: x}}
  - name: RemoveFailedPods
    args: {namespaces: {include: [kube-system, a]}}
  - name: LowNodeUtilization
    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}
  plugins:
    deschedule: {enabled: [RemoveFailedPods]}
    balance: {enabled: [LowNodeUtilization]}
"""
)
LEGACY = (
    "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates:\n    enabled: true\n"
)
POLICY_TEXTS = (EVICTING, PROTECTED, OPEN, LEGACY)


def new_cache(*texts: str) -> ClusterCache:
    """A cache fed by hand (no API server), its active policy ``kube-system/descheduler`` holding ``texts``."""
    cache = ClusterCache(None, ("kube-system", "descheduler"), Settings())  # type: ignore[arg-type]
    data = {f"policy-{number}.yaml": text for number, text in enumerate(texts)}
    metadata = {"name": "descheduler", "namespace": "kube-system"}
    cache.apply_policy("ADDED", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data})
    return cache


def feed(cache: ClusterCache, steps: list[tuple[bool, Json]]) -> None:
    for deleted, obj in steps:
        cache.apply(obj["kind"], "DELETED" if deleted else "ADDED", obj)


def both(decide_one: Any, *args: Any, **kwargs: Any) -> Decision:
    """The indexed decision, once checked against the reference decision on the same cache."""
    indexed = decide_one(*args, **kwargs)
    assert indexed == decide_one(*args, **kwargs, reference=True)
    return indexed


options = st.builds(
    lambda mode, deny, disabled, severities: Options(
        mode, frozenset(deny), Settings(disabled=set(disabled), severities=severities)
    ),
    st.sampled_from(("enforce", "warn")),
    st.sets(st.sampled_from(WORKLOAD_RULES)),
    st.sets(st.sampled_from(WORKLOAD_RULES), max_size=2),
    st.dictionaries(st.sampled_from(WORKLOAD_RULES), st.sampled_from(("error", "info")), max_size=2),
)


TARGETING = st.sampled_from(
    ({"matchLabels": {"app": "x"}}, {}, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["x", "y"]}]})
)


@st.composite
def pdb_changes(draw: st.DrawFn) -> tuple[str, Json | None, Json | None]:
    """``(operation, object, oldObject)`` of a PDB request; the old object usually has the new one's name."""
    operation = draw(st.sampled_from(("CREATE", "UPDATE", "DELETE")))
    current, previous = draw(pdbs()), draw(pdbs())
    if draw(st.booleans()):  # one that selects many of the generated workloads
        current["metadata"]["namespace"], current["spec"]["selector"] = "a", draw(TARGETING)
    if draw(st.integers(0, 3)):
        previous["metadata"] = dict(current["metadata"])
    return operation, None if operation == "DELETE" else current, None if operation == "CREATE" else previous


@st.composite
def clusters(draw: st.DrawFn) -> list[tuple[bool, Json]]:
    """Watch events, with some PDBs and evictable workloads added in namespace a that select one another."""
    steps = draw(events)
    for _ in range(draw(st.integers(0, 3))):
        added = draw(pdbs())
        added["metadata"]["namespace"], added["spec"]["selector"] = "a", draw(TARGETING)
        steps.append((False, added))
    for _ in range(draw(st.integers(0, 3))):
        added = draw(workloads(("Deployment", "StatefulSet", "ReplicaSet")))
        added["metadata"]["namespace"], added["spec"]["replicas"] = "a", 3
        added["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
        steps.append((False, added))
    return list(draw(st.permutations(steps)))


@settings(max_examples=300, deadline=None)
@given(
    clusters(),
    st.lists(st.sampled_from(POLICY_TEXTS), min_size=1, max_size=2),
    options,
    st.lists(st.one_of(workloads(REPOSITORY_KINDS), pdb_changes()), min_size=1, max_size=3),
)
def test_indexed_decisions_equal_the_reference_over_every_cached_object(steps, texts, chosen, requests):
    cache = new_cache(*texts)
    feed(cache, steps)
    for request in requests:
        if isinstance(request, tuple):
            operation, current, previous = request
            both(checks.pdb_decision, "u", "PodDisruptionBudget", operation, current, previous, chosen, cache)
        else:
            both(checks.workload_decision, "u", request["kind"], request, chosen, cache)


def deployment(name: str, namespace: str = "a", replicas: int = 3, **template: Any) -> Json:
    labels = template.pop("labels", {"app": name})
    spec = {"containers": [{"name": "c", "image": "i"}], **template}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": labels}, "spec": spec}},
    }


def budget(name: str, app: str, namespace: str = "a", **spec: Any) -> Json:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": app}}, **(spec or {"maxUnavailable": 1})},
    }


PRIORITY = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 9}
CLAIM = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
TABLE = [
    # (what, cached objects, request, the rules reported, a warning that must be among them)
    ("no PDB covers 3 replicas", [], deployment("web"), ["DS401"], "DS401 Deployment: 3 replicas evictable"),
    ("a PDB covers them", [budget("web", "web")], deployment("web"), [], None),
    ("one replica", [], deployment("web", replicas=1), [], None),  # DefaultEvictor minReplicas 2
    ("a claim", [budget("db", "db")], deployment("db", volumes=CLAIM), ["DS405"], "DS405 Deployment: mounts PVCs"),
    (
        "system-critical",
        [budget("dns", "dns")],
        deployment("dns", priorityClassName="system-node-critical"),
        [],
        None,  # SystemCriticalPods protects it
    ),
    ("another namespace excluded", [], deployment("web", "b"), ["DS401"], "RemovePodsViolatingNodeTaints of"),
    ("a PDB allowing nothing", [budget("web", "web", maxUnavailable=0)], deployment("web"), [], None),
    (
        "the new PDB allows nothing",
        [deployment("web")],
        budget("web", "web", maxUnavailable=0),
        ["DS402"],
        "allows no disruption of Deployment a/web",
    ),
    ("a second PDB", [deployment("web"), budget("w1", "web")], budget("w2", "web"), ["DS403"], "a/w1, a/w2"),
    ("the last PDB goes", [deployment("web"), budget("web", "web")], None, [], "DS401 Deployment a/web: no Pod"),
    ("another PDB goes", [deployment("web"), budget("w1", "web"), budget("w2", "web")], None, [], None),
    ("a PriorityClass", [PRIORITY, budget("web", "web")], deployment("web", priorityClassName="high"), [], None),
]


@pytest.mark.parametrize(("what", "cached", "incoming", "rules", "warning"), TABLE, ids=[row[0] for row in TABLE])
def test_table_of_decisions_indexed_and_reference(what, cached, incoming, rules, warning):
    cache = new_cache(EVICTING)
    feed(cache, [(False, obj) for obj in cached])
    if incoming is None:  # the deletion of the last cached PDB
        gone = cached[-1]
        decision = both(checks.pdb_decision, "u", "PodDisruptionBudget", "DELETE", None, gone, Options(), cache)
    elif incoming["kind"] == "PodDisruptionBudget":
        decision = both(checks.pdb_decision, "u", "PodDisruptionBudget", "CREATE", incoming, None, Options(), cache)
    else:
        decision = both(checks.workload_decision, "u", "Deployment", incoming, Options(), cache)
    assert decision.rules == rules
    assert warning is None or any(warning in line for line in decision.warnings), decision.warnings
    assert warning is not None or not decision.warnings


def test_denied_rules_deny_alike_and_the_update_of_an_object_replaces_its_cached_self():
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment("web", replicas=1))])
    denying = Options(deny_rules=frozenset({"DS401"}))
    decision = both(checks.workload_decision, "u", "Deployment", deployment("web"), denying, cache)
    assert not decision.allowed and "DS401" in decision.message


def test_an_object_the_api_server_would_not_send_is_decided_over_every_cached_object():
    cache = new_cache(EVICTING)
    odd = {**deployment("web"), "kind": "StatefulSet"}  # the request says Deployment
    assert checks.workload_decision("u", "Deployment", odd, Options(), cache).rules == ["DS401"]


class Counting:
    """Counts what the indexed checks judge: workloads evaluated against the policy."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.judged = 0
        evaluate = EvictionScope.evaluate

        def counted(scope: EvictionScope, inventory: Any, index: Any = None) -> Any:
            self.judged += len(inventory.workloads)
            return evaluate(scope, inventory, index)

        monkeypatch.setattr(EvictionScope, "evaluate", counted)


def cost(monkeypatch: pytest.MonkeyPatch, others: int) -> tuple[int, int]:
    """Workloads judged and PDB selectors evaluated by a Deployment update and a PDB update in namespace a, with
    ``others`` Deployments (and a PDB for every fifth) in namespace b."""
    cache = new_cache(EVICTING)
    crowd = [deployment(f"w{number}", "b") for number in range(others)]
    crowd += [budget(f"p{number}", f"w{number}", "b") for number in range(0, others, 5)]
    feed(cache, [(False, obj) for obj in [*crowd, deployment("web"), deployment("api"), budget("web", "web")]])
    counting = Counting(monkeypatch)
    with cache.indexed() as index:
        before = index.store.index.evaluations
    update = {"uid": "u", "kind": {"kind": "Deployment"}, "operation": "UPDATE", "object": deployment("web")}
    assert decide(update, Options(), cache).rules == []
    change = {"object": budget("web", "web", maxUnavailable=2), "oldObject": budget("web", "web")}
    assert decide({**update, "kind": {"kind": "PodDisruptionBudget"}, **change}, Options(), cache).rules == []
    with cache.indexed() as index:
        return counting.judged, index.store.index.evaluations - before


def test_a_request_reads_its_namespace_and_selectors_not_the_cluster(monkeypatch):
    judged, evaluations = cost(monkeypatch, 10)
    assert judged == 2  # the Deployment, then the one the PDB selects
    assert (judged, evaluations) == cost(monkeypatch, 2_000)


def test_the_cache_is_indexed():
    assert isinstance(new_cache(), Indexed)


# -- the informer --------------------------------------------------------------------------------------------------


def item(name: str, version: str, app: str = "web") -> Json:
    obj = deployment(name)
    obj["metadata"]["resourceVersion"] = version
    return {key: value for key, value in obj.items() if key not in ("apiVersion", "kind")}


class FakeKube:
    """Scripted listings and watches of one kind; the cache stops when the script runs out."""

    def __init__(self, cache: ClusterCache, listings: list[Json], watches: list[list[Json]]) -> None:
        self.cache, self.listings, self.watches = cache, listings, watches
        self.calls: list[tuple[str, str]] = []

    def find(self, kind: str, versions: tuple[str, ...]) -> Served:
        return Served("apps/v1", "deployments", "Deployment", True)

    def get(self, path: str, params: Json) -> Json:
        self.calls.append(("list", ""))
        return self.listings.pop(0)

    def watch(self, path: str, params: Json) -> Iterator[Json]:
        self.calls.append(("watch", params["resourceVersion"]))
        if not self.watches:
            self.cache.stop()
            return iter(())
        return iter(self.watches.pop(0))


def names(cache: ClusterCache) -> list[str]:
    return [obj["metadata"]["name"] for obj in cache.objects()]


def test_the_informer_watches_on_from_the_last_version_and_lists_again_only_when_it_expired(monkeypatch):
    frozen: list[int] = []
    monkeypatch.setattr(state.gc, "freeze", lambda: frozen.append(len(frozen)))
    cache = new_cache(EVICTING)
    listing = {"metadata": {"resourceVersion": "10"}, "items": [item("one", "5"), item("two", "6")]}
    relisting = {"metadata": {"resourceVersion": "40"}, "items": [item("two", "7"), item("four", "39")]}
    watches = [
        [{"type": "ADDED", "object": item("three", "11")}, {"type": "BOOKMARK", "object": item("", "20")}],
        [{"type": "DELETED", "object": item("one", "21")}],  # ends: watched again from 21
        [{"type": "ERROR", "object": {"code": 410}}],  # expired: listed again
        [],
    ]
    kube = FakeKube(cache, [listing, relisting], watches)
    cache.kube = kube  # type: ignore[assignment]
    cache._run("Deployment", ("apps/v1",))
    assert kube.calls == [
        ("list", ""),
        ("watch", "10"),
        ("watch", "20"),
        ("watch", "21"),
        ("list", ""),
        ("watch", "40"),
        ("watch", "40"),
    ]
    assert names(cache) == ["two", "four"]  # "two" kept its place, "three" was not listed again
    assert frozen == [0, 1]  # what each listing read is kept out of the cyclic collector
    with cache.indexed() as index:
        assert index.store.keys("Deployment") == [("Deployment", "a", "two"), ("Deployment", "a", "four")]


def test_a_listing_without_the_policy_configmap_forgets_the_policy():
    cache = new_cache(EVICTING)
    assert cache.policy() is not None
    cache._replace("policy", [], cache.apply_policy)
    assert cache.policy() is None


class Unindexed:
    """A cluster view without an index (policy and objects only)."""

    def __init__(self, cache: ClusterCache) -> None:
        self.policy, self.objects, self.is_active_policy = cache.policy, cache.objects, cache.is_active_policy


def review(kind: str, obj: Json | None, operation: str = "CREATE", old: Json | None = None) -> Json:
    return {"uid": "u", "kind": {"kind": kind}, "operation": operation, "object": obj, "oldObject": old}


def test_bounded_requests_are_those_the_index_answers_judging_few_workloads():
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment(f"w{number}", labels={"app": "x"})) for number in range(40)])
    assert checks.bounded(review("Deployment", deployment("web")), cache)
    assert checks.bounded(review("Deployment", None, "DELETE"), cache)
    assert not checks.bounded(review("Deployment", {**deployment("web"), "kind": "StatefulSet"}), cache)
    assert not checks.bounded(review("Deployment", deployment("web")), Unindexed(cache))
    assert not checks.bounded(review("ConfigMap", {"kind": "ConfigMap", "metadata": {"name": "c"}}), cache)
    assert checks.bounded(review("PodDisruptionBudget", budget("one", "w1")), cache)  # selects none of them
    wide = budget("all", "x")  # selects the 40
    assert not checks.bounded(review("PodDisruptionBudget", wide), cache)
    assert checks.bounded(review("PodDisruptionBudget", wide), cache, most=40)
    assert not checks.bounded(review("PodDisruptionBudget", None, "DELETE", wide), cache)
    assert checks.bounded(review("PodDisruptionBudget", wide, "DELETE", budget("one", "w1")), cache)


def test_a_pdb_without_match_labels_is_bounded_by_the_workloads_it_selects_among_few_enough() -> None:
    """A selector of expressions alone may select any workload of its namespace: those are matched to count the
    ones it selects, unless there are more than MATCHED times the bound."""
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment(f"w{n}", labels={"app": "x", "n": str(n % 20)})) for n in range(40)])
    pair = budget("pair", "x")  # selects 2 of the 40
    pair["spec"]["selector"] = {"matchExpressions": [{"key": "n", "operator": "In", "values": ["0"]}]}
    assert checks.MATCHED * 4 < 40 <= checks.MATCHED * 5
    assert checks.bounded(review("PodDisruptionBudget", pair), cache, most=5)
    assert not checks.bounded(review("PodDisruptionBudget", pair), cache, most=4)  # 40 candidates: not matched
    assert not checks.bounded(review("PodDisruptionBudget", pair, "UPDATE", pair), cache, most=5)  # 80 candidates


@pytest.mark.parametrize("reference", [False, True], ids=["indexed", "reference"])
def test_a_pdb_decision_runs_the_repository_rules_once(monkeypatch: pytest.MonkeyPatch, reference: bool) -> None:
    """What a PDB change leaves unprotected follows from the findings after it: one pass of the rules, not two."""
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment("web")), (False, budget("web", "web"))])
    passes: list[int] = []
    real = checks.check_inventory

    def counting(repo, settings, focus=None):  # type: ignore[no-untyped-def]
        passes.append(len(repo.inventory.workloads))
        return real(repo, settings, focus)

    monkeypatch.setattr(checks, "check_inventory", counting)
    old = budget("web", "web")
    decision = checks.pdb_decision(
        "u", "PodDisruptionBudget", "DELETE", None, old, Options(), cache, reference=reference
    )
    assert passes == [1]
    assert any("DS401 Deployment a/web: no PodDisruptionBudget covers it" in line for line in decision.warnings)


def test_a_pdb_request_compiles_each_of_its_selectors_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Routing (:func:`bounded`) and deciding a PDB update read the old and the new PDB once: two selectors
    compiled, whatever the routing and the rules ask of them."""
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment("web")), (False, budget("web", "web")), (False, budget("again", "web"))])
    compiled: list[Any] = []
    real = checks.pdb_selector

    def counting(pdb: Any) -> Any:
        compiled.append(pdb.name)
        return real(pdb)

    for module in (checks, store_module, pdb_module):
        monkeypatch.setattr(module, "pdb_selector", counting)
    request = review("PodDisruptionBudget", budget("web", "web", maxUnavailable=0), "UPDATE", budget("web", "web"))
    assert checks.bounded(request, cache)
    assert decide(request, Options(), cache).rules == ["DS402", "DS403"]
    assert sorted(compiled) == ["web", "web"]


def test_the_repository_rules_match_a_workload_to_its_pdbs_once() -> None:
    """DS401, DS402 and DS403 all ask which PDBs cover a targeted workload: its two candidates (the cached PDB and
    the incoming one) are evaluated once."""
    cache = new_cache(EVICTING)
    feed(cache, [(False, deployment("web")), (False, budget("web", "web"))])
    with cache.indexed() as index:
        before = index.store.index.evaluations
    request = review("PodDisruptionBudget", budget("again", "web", maxUnavailable=0))
    assert decide(request, Options(), cache).rules == ["DS402", "DS403"]
    with cache.indexed() as index:
        assert index.store.index.evaluations - before == 2


def test_a_workload_that_runs_no_descheduler_is_not_given_to_the_deployment_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deployment rules judge descheduler containers alone: a workload without one skips their model."""
    judged: list[str] = []
    real = checks.deployment_findings

    def counting(file: str, obj: Json, settings: Settings) -> Any:
        judged.append(obj["metadata"]["name"])
        return real(file, obj, settings)

    monkeypatch.setattr(checks, "deployment_findings", counting)
    descheduler = deployment("descheduler", containers=[{"name": "d", "image": "registry.k8s.io/descheduler:v0.36.0"}])
    assert checks.own_findings("Deployment", deployment("web"), Options()) == []
    assert checks.own_findings("Deployment", descheduler, Options()) != []
    assert judged == ["descheduler"]
