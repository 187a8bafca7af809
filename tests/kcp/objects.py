"""Builders for the objects cluster tests create, and a poll helper."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from tests.kcp.api import Api, Json

T = TypeVar("T")


def pod(
    name: str,
    namespace: str,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    owner: Json | None = None,
    **spec: object,
) -> Json:
    """A one-container pod, bound to ``node`` when given, controlled by ``owner`` (an ownerReference) when given."""
    metadata: Json = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner is not None:
        metadata["ownerReferences"] = [{"controller": True, "blockOwnerDeletion": False, **owner}]
    body: Json = {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9"}], **spec}
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


def pdb(
    api: Api,
    name: str,
    namespace: str,
    match_labels: dict[str, str],
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
) -> Json:
    """A PodDisruptionBudget at the version the server prefers (``policy/v1`` when served, else ``policy/v1beta1``)."""
    spec: Json = {"selector": {"matchLabels": match_labels}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {
        "apiVersion": api.pdb_version(),
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def wait_for(probe: Callable[[], T | None], timeout: float = 20.0, what: str = "the condition") -> T:
    """Poll ``probe`` until it returns something truthy; raise ``AssertionError`` naming ``what`` after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)
