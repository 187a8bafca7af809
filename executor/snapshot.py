"""``desched simulate --cluster SNAPSHOT``: a cluster snapshot read, bounded, into its objects.

Contract of :func:`read_snapshot`: the file (``-``: stdin, any pipe or device too) is read in chunks of
:data:`CHUNK_BYTES` and never past :data:`MAX_SNAPSHOT_BYTES`, so ``/dev/zero`` or an endless pipe stops at the limit;
the bytes are decoded as ``desched lint`` decodes a file (UTF-8, or UTF-16 with its BOM; a NUL byte makes it binary)
and parsed as JSON (when the text starts with ``{``) or multi-document YAML; the ``items`` of a ``*List`` document
are flattened. A snapshot must hold at least one ``*List`` document with a list of ``items`` (``kubectl get -o
yaml|json`` prints one, even with no objects) or one object of a kind :data:`SNAPSHOT_KINDS` names; anything else
(``{}``, an empty file, a policy given by mistake) is refused, as it would run as an empty cluster. Every failure is
a :class:`~desched.errors.UsageError` with one line (``cannot read SNAPSHOT: ...``, exit code 2).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from desched.errors import UsageError
from desched.executor.cluster import Json

#: The largest snapshot read. ``kubectl get nodes,pods,pdb,namespaces,priorityclasses,pvc -A -o yaml`` prints 3 to
#: 6 KiB a pod (managedFields are left out since kubectl 1.21), so Kubernetes' largest tested cluster (150,000 pods
#: on 5,000 nodes) fits in 1 GiB. Each snapshot MiB costs about 5 MiB of memory (compact JSON, from 1,000 nodes; the
#: peak is the read's, below the standard library's own ``json.load`` of the file; less for kubectl's indented
#: output: ``python bench/simulate.py --memory``), so the limit keeps a run within what such a cluster's own
#: control-plane machines have.
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
#: The kinds simulate reads from a snapshot (desched.executor.cluster); others are counted and skipped
SNAPSHOT_KINDS = frozenset(
    {"Node", "Pod", "PodDisruptionBudget", "Namespace", "PriorityClass", "PersistentVolumeClaim"}
)


def read_snapshot(path: str) -> list[Json]:
    """The objects of the snapshot at ``path`` (see the module contract); :class:`UsageError` when it cannot be
    read or is not a snapshot."""
    from desched.reading.sources import SourceError, decode_text

    try:
        if path == "-":
            data = read_bounded(sys.stdin.buffer, MAX_SNAPSHOT_BYTES)
        else:
            with open(path, "rb") as handle:
                data = read_bounded(handle, MAX_SNAPSHOT_BYTES)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise UsageError(f"cannot read {path}: larger than the {MAX_SNAPSHOT_BYTES >> 30} GiB snapshot limit")
    try:
        text = decode_text(data)
    except SourceError as error:
        raise UsageError(f"cannot read {path}:{error.line}:{error.column}: {error.message}") from None
    del data
    return _objects(path, _documents(path, text))


def read_bounded(stream: BinaryIO, limit: int) -> bytearray:
    """The bytes of ``stream`` up to ``limit + 1`` (one more than the limit: the caller knows it is past it), read in
    chunks of :data:`CHUNK_BYTES`."""
    data = bytearray()
    while len(data) <= limit:
        chunk = stream.read(min(CHUNK_BYTES, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def _documents(path: str, text: str) -> list[Any]:
    import yaml

    try:
        if text.lstrip().startswith("{"):
            return [json.loads(text, object_hook=_one_copy_of_each_string())]
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except (ValueError, yaml.YAMLError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"cannot read {path}: {first}") from None


def _one_copy_of_each_string() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``json.loads`` ``object_hook`` that keeps one copy of each string value of an object: a cluster repeats
    its namespaces, labels, images, quantities and timestamps in every pod: a quarter of a decoded snapshot's
    memory (the decoder already keeps one copy of each key). The objects are otherwise unchanged."""
    seen: dict[str, str] = {}
    keep = seen.setdefault

    def hook(obj: dict[str, Any]) -> dict[str, Any]:
        for name, value in obj.items():
            if type(value) is str:
                obj[name] = keep(value, value)
        return obj

    return hook


def _objects(path: str, documents: list[Any]) -> list[Json]:
    """The objects of ``documents``, ``*List`` items flattened; :class:`UsageError` when they are not a snapshot."""
    objects: list[Json] = []
    listed = False
    for document in documents:
        if not isinstance(document, dict):
            continue
        if str(document.get("kind", "")).endswith("List") and isinstance(document.get("items"), list):
            listed = True
            objects.extend(item for item in document["items"] if isinstance(item, dict))
        else:
            objects.append(document)
    if not listed and not any(obj.get("kind") in SNAPSHOT_KINDS for obj in objects):
        kinds = ", ".join(sorted(SNAPSHOT_KINDS))
        raise UsageError(f"cannot read {path}: not a cluster snapshot (no `kind: List` with items, no {kinds})")
    return objects
