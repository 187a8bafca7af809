"""desched.executor.records: a pod read once into a typed record, and the cluster answering from it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.executor import podutil
from desched.executor.cluster import Cluster
from desched.executor.records import PodRecord
from desched.workloads.selectors import label_map
from tests.executor.builders import build_pod, set_rs_owner


def _ready(status: str) -> dict[str, Any]:
    return {"conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": status}]}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param({}, {"namespace": "", "name": "", "node": "", "phase": None, "terminal": False}, id="empty"),
        pytest.param(
            {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}},
            {"namespace": "ns", "name": "p", "node": "n1", "phase": "Running", "terminal": False},
            id="running",
        ),
        pytest.param(
            {"status": {"phase": "Succeeded"}}, {"phase": "Succeeded", "terminal": True, "ready": False}, id="succeeded"
        ),
        pytest.param({"status": {"phase": "Failed"}}, {"terminal": True}, id="failed"),
        pytest.param({"status": {"phase": ""}}, {"terminal": False}, id="empty-phase-is-not-terminal"),
        pytest.param({"status": _ready("True")}, {"ready": True}, id="ready"),
        pytest.param({"status": _ready("False")}, {"ready": False}, id="not-ready"),
        pytest.param(
            {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]}},
            {"ready": False},
            id="first-ready-condition-decides",
        ),
        pytest.param({"status": {"conditions": ["Ready", None]}}, {"ready": False}, id="malformed-conditions"),
        pytest.param(
            {"metadata": {"ownerReferences": [{"uid": "b"}, {"uid": "a"}, {"uid": "b"}, {"kind": "X"}]}},
            {"owners": ("", "a", "b")},
            id="owners-once-each-sorted",
        ),
        pytest.param(
            {"metadata": {"namespace": "ns", "labels": {"app": "web", "tier": 3}}},
            {"labels": {"app": "web"}, "label_set": ("ns", frozenset({("app", "web")}))},
            id="labels-as-label-map-reads-them-not-text-dropped",
        ),
    ],
)
def test_record_fields(pod: dict[str, Any], expected: dict[str, Any]) -> None:
    record = PodRecord(pod, "uid-1")
    assert record.obj is pod and record.uid == "uid-1"
    assert {name: getattr(record, name) for name in expected} == expected
    assert (record.requests, record.priority, record.facts) == (None, None, None)  # computed on first use


def test_records_made_with_one_shared_mapping_share_labels_and_owners() -> None:
    shared: dict[Any, Any] = {}
    first, second = (set_rs_owner(build_pod(name)) for name in ("a", "b"))
    for pod in (first, second):
        pod["metadata"]["labels"] = {"app": "web"}
    one, other = PodRecord(first, "1", shared), PodRecord(second, "2", shared)
    assert one.labels is other.labels and one.label_set is other.label_set and one.owners is other.owners
    alone = PodRecord(second, "2")
    assert alone.labels == one.labels and alone.labels is not one.labels


def test_cluster_record_serves_the_terminating_copy_and_pods_it_never_indexed() -> None:
    cluster = Cluster()
    pod = set_rs_owner(build_pod("p", 100, 0, "n1"))
    cluster.add(pod)
    record = cluster.record(pod)
    assert cluster.records[pod["metadata"]["uid"]] is record and record.obj is pod
    cluster.terminate(pod)
    (copy,) = cluster.pods_on_node("n1")
    assert copy is not pod and cluster.record(copy) is record
    stranger = build_pod("stranger")
    stranger["metadata"]["uid"] = "never-added"
    assert cluster.record(stranger).obj is stranger and "never-added" not in cluster.records


def test_a_number_uid_is_read_as_text() -> None:
    cluster = Cluster()
    pod = build_pod("p", node="n1")
    pod["metadata"]["uid"] = 1234
    cluster.add(pod)
    assert pod["metadata"]["uid"] == "1234" and cluster.remove(pod) and not cluster.pods_on_node("n1")


def test_requests_and_priority_are_computed_once_and_kept_on_the_record() -> None:
    cluster = Cluster()
    pod = build_pod("p", 250, 1000, "n1")
    cluster.add(pod)
    requests = cluster.pod_requests(pod)
    assert requests == podutil.pod_requests(pod) and cluster.record(pod).requests is requests
    assert cluster.pod_requests(pod) is requests
    key = cluster.priority_key(pod)
    assert key == podutil.priority_key(pod) and cluster.record(pod).priority is key


_TEXT = st.text(max_size=4)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _TEXT)
_POD = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "namespace": _SCALAR,
                "name": _SCALAR,
                "labels": st.one_of(st.none(), st.dictionaries(_TEXT, _SCALAR, max_size=3)),
                "ownerReferences": st.lists(st.fixed_dictionaries({}, optional={"uid": _SCALAR}), max_size=3),
            },
        ),
        "spec": st.fixed_dictionaries({}, optional={"nodeName": _SCALAR}),
        "status": st.fixed_dictionaries(
            {},
            optional={
                "phase": st.sampled_from([None, "", "Pending", "Running", "Succeeded", "Failed", "Unknown"]),
                "conditions": st.lists(
                    st.fixed_dictionaries({"type": st.sampled_from(["Ready", "Other"]), "status": _SCALAR}),
                    max_size=3,
                ),
            },
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(_POD)
def test_record_agrees_with_reading_the_object(pod: dict[str, Any]) -> None:
    """Every field equals what the executor read from the object before records existed."""
    record = PodRecord(pod, "u")
    metadata = pod.get("metadata") or {}
    assert record.terminal == podutil.is_terminal(pod)
    assert record.node == str((pod.get("spec") or {}).get("nodeName") or "")
    assert record.namespace == str(metadata.get("namespace") or "")
    assert record.labels == label_map(metadata.get("labels"))
    assert record.owners == tuple(sorted({str(ref.get("uid") or "") for ref in podutil.owner_refs(pod)}))
    ready = [
        c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"
    ]
    assert record.ready == (ready[0] if ready else False)
