"""One pod as the executor reads it: a typed record made once, when the cluster indexes the decoded pod.

Contract: :class:`PodRecord` holds what a cycle reads of a pod again and again (its identity, node, owners, labels,
phase and readiness), read from the object when the record is made; what only some cycles need (requests, the
priority sort key, the facts node fit reads) is computed on first use by the cluster and kept on the record, since
a pod's spec does not change within a run. The decoded object stays the record's :attr:`PodRecord.obj`: plugins read
the fields only they need from it, and reports name it. A pod's terminating copy (``Cluster.terminate``) differs
from it only in ``metadata.deletionTimestamp``, which no record field holds, so both share one record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from desched.executor.podutil import PriorityKey
from desched.workloads.selectors import label_map

if TYPE_CHECKING:
    from desched.executor.nodeutil import PodFacts

__all__ = ["PodRecord"]

_EMPTY: Mapping[str, Any] = {}
_TERMINAL_PHASES = ("Succeeded", "Failed")

#: A namespace and the frozenset of a label map's items: pods of one workload share it
LabelSet = tuple[str, frozenset[tuple[str, str]]]


class PodRecord:
    """What the executor reads of one pod (see the module contract). ``uid`` is ``metadata.uid``, or
    ``<namespace>/<name>`` for a pod without one (the cluster writes it into the object too). Records made with one
    ``shared`` mapping share equal label sets and owner tuples (a workload's pods carry the same): one copy each,
    which callers must not change."""

    __slots__ = (
        "facts",
        "label_set",
        "labels",
        "name",
        "namespace",
        "node",
        "obj",
        "owners",
        "phase",
        "priority",
        "ready",
        "requests",
        "terminal",
        "uid",
    )

    def __init__(self, obj: Mapping[str, Any], uid: str, shared: dict[Any, Any] | None = None) -> None:
        metadata = obj.get("metadata") or _EMPTY
        status = obj.get("status") or _EMPTY
        self.obj = obj
        self.uid = uid
        self.namespace = str(metadata.get("namespace") or "")
        self.name = str(metadata.get("name") or "")
        self.node = str((obj.get("spec") or _EMPTY).get("nodeName") or "")
        self.phase = status.get("phase")
        self.terminal = self.phase in _TERMINAL_PHASES
        self.ready = _ready(status)
        keep = {}.setdefault if shared is None else shared.setdefault
        owners = tuple(sorted({str(ref.get("uid") or "") for ref in metadata.get("ownerReferences") or ()}))
        #: the uids the pod's ownerReferences name, each once, sorted
        self.owners: tuple[str, ...] = keep(owners, owners)
        labels = label_map(metadata.get("labels"))
        label_set = (self.namespace, frozenset(labels.items()))
        self.label_set: LabelSet
        self.labels: dict[str, str]
        self.label_set, self.labels = keep(label_set, (label_set, labels))
        self.requests: dict[str, int] | None = None  # pod_requests(obj), shared by pods that request alike
        self.priority: PriorityKey | None = None  # priority_key(obj), shared by pods that sort alike
        self.facts: PodFacts | None = None  # what node fit reads, made by its index on first use


def _ready(status: Mapping[str, Any]) -> bool:
    """The ``Ready`` condition is ``True`` (the first ``Ready`` condition decides; none: not ready)."""
    for condition in status.get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False
