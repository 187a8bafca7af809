"""Decisions on policy objects by content: GitOps controllers send the same object again and again.

Contract: :class:`DecisionCache` answers a policy object it has decided before (same kind, operation and what the
decision reads of the object: all of a KubeDescheduler; of a ConfigMap its apiVersion, kind, name, namespace,
opt-out annotation and data) with the earlier decision and the new uid, least recently used first out. Labels,
managedFields, the kubectl last-applied annotation and the like, often larger than the policy, neither change the
decision nor the key. Objects whose decision reads the cluster cache (the active policy ConfigMap) are decided every
time (:func:`reads_cluster`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from desched.tree import mapping_or_empty
from desched.webhook.decision import SKIP_ANNOTATION, ClusterView, Decision, Json, Options, namespaced_name
from desched.webhook.review import POLICY_KINDS, decide

__all__ = ["DecisionCache", "reads_cluster"]


def reads_cluster(request: Json, cluster: ClusterView | None) -> bool:
    """Whether a policy object's decision reads the cluster cache: it is the active policy ConfigMap, whose update is
    also checked against every cached workload."""
    if cluster is None or mapping_or_empty(request["kind"]).get("kind") != "ConfigMap":
        return False
    return cluster.is_active_policy(
        *namespaced_name(mapping_or_empty(request.get("object") or request.get("oldObject")))
    )


class DecisionCache:
    """Decisions on policy objects by content (``size`` entries; thread-safe; see the module contract)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, Decision] = OrderedDict()
        self._lock = threading.Lock()

    def decide(self, request: Json, options: Options, cluster: ClusterView | None = None) -> Decision:
        """:func:`desched.webhook.review.decide`, from the cache when this object was decided before."""
        key = self.key(request, cluster)
        known = self.get(key, request)
        if known is not None:
            return known
        decision = decide(request, options, cluster)
        self.put(key, decision)
        return decision

    def get(self, key: bytes | None, request: Json) -> Decision | None:
        """The earlier decision under ``key`` (:meth:`key`), answering ``request``; None when there is none."""
        if key is None:
            return None
        with self._lock:
            known = self._entries.get(key)
            if known is None:
                return None
            self._entries.move_to_end(key)
        return known._replace(uid=str(request["uid"]), cached=True)

    def put(self, key: bytes | None, decision: Decision) -> None:
        """Remember ``decision`` under ``key`` (nothing when the key is None)."""
        if key is None:
            return
        with self._lock:
            self._entries[key] = decision
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)

    @staticmethod
    def key(request: Json, cluster: ClusterView | None) -> bytes | None:
        """The cache key of ``request``; None when its decision is not cached (see the module contract)."""
        kind = mapping_or_empty(request["kind"]).get("kind")
        obj = request.get("object")
        if (
            kind not in POLICY_KINDS
            or request["operation"] not in ("CREATE", "UPDATE")
            or not isinstance(obj, dict)
            or reads_cluster(request, cluster)
        ):
            return None
        data = obj.get("data") if kind == "ConfigMap" else None
        texts = data if isinstance(data, dict) and all(isinstance(value, str) for value in data.values()) else None
        head = _decision_input(kind, obj, ["texts", len(texts)] if texts is not None else obj.get("data"))
        digest = hashlib.blake2b(json.dumps([kind, request["operation"], head]).encode(), digest_size=16)
        # The policy texts are hashed as they are, length-prefixed: no JSON escaping of megabytes on the event loop,
        # and hashlib works on large buffers without holding the GIL.
        for part in (part for name, value in (texts or {}).items() for part in (name, value)):
            raw = part.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "big"))
            digest.update(raw)
        return digest.digest()


def _decision_input(kind: str, obj: Json, data: Any) -> Any:
    """What of a policy object its decision reads (see the module contract), ``data`` standing for a ConfigMap's."""
    if kind != "ConfigMap":
        return obj
    metadata = mapping_or_empty(obj.get("metadata"))
    annotations = mapping_or_empty(metadata.get("annotations"))
    envelope = [obj.get("apiVersion"), obj.get("kind"), metadata.get("name"), metadata.get("namespace")]
    return [envelope, [annotations[SKIP_ANNOTATION]] if SKIP_ANNOTATION in annotations else [], data]
