"""Property: collect() and evaluate() never raise, whatever a manifest or policy holds."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from desched.reading.yamlsrc import load_all
from desched.workloads.model import collect
from desched.workloads.pdb import PDBIndex, allowed_disruptions
from desched.workloads.scope import evaluate, summarize

from .test_model import MANIFESTS
from .test_scope import PVC_CLASSES, model, policy

BASE_DOCS = load_all(MANIFESTS)
BASE_POLICY = policy("RemoveDuplicates", {"namespaces": {"exclude": ["kube-system"]}, "excludeOwnerKinds": ["Job"]})
BASE_POLICY["profiles"][0]["pluginConfig"][0]["args"] = {
    **PVC_CLASSES,
    "labelSelector": {"matchLabels": {"app": "web"}},
    "namespaceLabelSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
    "priorityThreshold": {"name": "high"},
    "minReplicas": 2,
    "noEvictionPolicy": "Mandatory",
}
BASE_POLICY["profiles"][0]["plugins"]["deschedule"] = {"enabled": ["PodLifeTime", "RemoveFailedPods"]}
BASE_POLICY["profiles"][0]["pluginConfig"].append(
    {"name": "PodLifeTime", "args": {"ownerKinds": {"include": ["ReplicaSet"]}, "labelSelector": {}}}
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=5),
    st.sampled_from(
        ["50%", "In", "NotIn", "Exists", "DoesNotExist", "app", "web", "Deployment", "policy/v1beta1", "List"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["app", "key", "operator", "values", "matchLabels", "name", "kind", "items", "spec"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=6,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _paths(child, (*prefix, index))


def _mutate(root, choice, value):
    root = copy.deepcopy(root)
    paths = list(_paths(root))
    path = paths[choice % len(paths)]
    if not path:
        return value
    node = root
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return root


mutations = st.lists(st.tuples(st.integers(0, 10_000), values), min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(doc_mutations=mutations, policy_mutations=mutations)
def test_collect_and_evaluate_never_raise(doc_mutations, policy_mutations):
    docs = [dict(d) for d in BASE_DOCS]
    for choice, value in doc_mutations:
        index = choice % len(docs)
        docs[index] = _mutate(docs[index], choice // len(docs), value)
    pol = BASE_POLICY
    for choice, value in policy_mutations:
        pol = _mutate(pol, choice, value)
    inventory = collect(("m.yaml", d) for d in docs)
    index = PDBIndex(inventory.pdbs)
    for workload in inventory.workloads:
        for pdb in index.matching(workload):
            allowed_disruptions(pdb, workload.replicas)
        workload.where((*workload.pod_path, "spec", "volumes", 0))
    verdicts = evaluate(model(pol), inventory, 36, index)
    summarize(verdicts)
    for target in (29, 33):
        evaluate(model(pol), inventory, target)
