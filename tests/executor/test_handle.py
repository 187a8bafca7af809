"""Handle.filter_and: ``filter(pod) and test(pod)``, the test first unless verdicts are recorded."""

from __future__ import annotations

from desched.executor.cluster import Cluster, Json
from desched.executor.evictions import Limits, PodEvictor
from desched.executor.framework import EvictorVerdict, Handle
from tests.executor.builders import NOW, build_node, build_pod, evictor_from, set_rs_owner


def _handle(verdicts: dict[tuple[str, str], EvictorVerdict] | None) -> tuple[Handle, list[Json]]:
    pods = [set_rs_owner(build_pod("owned", node="n1")), build_pod("bare", node="n1")]
    cluster = Cluster.from_objects([build_node("n1", 1000, 10**9, 10), *pods])
    handle = Handle(cluster, NOW, "p", evictor_from({}, cluster, NOW), PodEvictor(cluster, Limits()), verdicts)
    return handle, list(cluster.pods.values())


def test_the_answer_is_filter_and_test() -> None:
    for verdicts in (None, {}):
        handle, (owned, bare) = _handle(verdicts)
        assert handle.filter_and(owned, lambda pod: True)
        assert not handle.filter_and(owned, lambda pod: False)
        assert not handle.filter_and(bare, lambda pod: True)  # no ownerRefs: Filter refuses it


def test_without_verdicts_a_failing_test_spares_the_filter_and_with_verdicts_it_does_not() -> None:
    handle, (owned, bare) = _handle(None)
    tested: list[str] = []
    assert not handle.filter_and(bare, lambda pod: tested.append(pod["metadata"]["name"]) is not None)
    assert tested == ["bare"]
    assert handle.default_evictor._filtered == {}  # Filter was not asked
    verdicts: dict[tuple[str, str], EvictorVerdict] = {}
    handle, (owned, bare) = _handle(verdicts)
    tested.clear()
    assert not handle.filter_and(bare, lambda pod: tested.append(pod["metadata"]["name"]) is not None)
    assert tested == []  # Filter refused it first, and its verdict is recorded
    assert not handle.filter_and(owned, lambda pod: False)
    assert [(verdict.pod, verdict.evictable) for verdict in verdicts.values()] == [("bare", False), ("owned", True)]
