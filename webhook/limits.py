"""Limits on the size and complexity of a policy object, checked on its text before anything parses it.

Contract: :meth:`PolicyLimits.exceeded` names the first limit a policy object breaks, or returns None. It reads each
policy data key of a ConfigMap (:func:`desched.gitops.documents.configmap_keys`) as text, and a KubeDescheduler or
GitOps wrapper as the JSON object received; it never parses YAML. Of a text, bytes are exact (UTF-8), documents are the
lines that start with ``---`` plus one, profiles the items of a block ``profiles:`` sequence (the longest one
counts), and YAML nodes an upper estimate for block YAML: two per ``key:``, one per ``-`` item and per comma. Of an
object, bytes are those of its ``repr``, profiles ``spec.profiles`` and nodes every key and value. Aliases, which
could expand beyond the text, stay bounded by the loader's own limit
(:data:`desched.reading.yamlnodes.MAX_EXPANDED_NODES`) and by the time budget of the worker process that decides them.
:meth:`PolicyLimits.refuses` applies them to an admission request (an object that opts out of validation is not
refused); with ``sizes_only``, only the byte size of a ConfigMap's policy texts is checked, which needs no scan (what
the server's event loop checks of a large object before handing it to a worker, which checks the rest).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import NamedTuple

from desched.gitops.documents import configmap_keys
from desched.gitops.policylimits import count_nodes
from desched.tree import mapping_or_empty
from desched.webhook.decision import Json, skip

__all__ = ["PolicyLimits"]

# Patterns that start with a literal, so that the engine jumps between its occurrences: a multi-line ``^`` is tried at
# every line start, several times slower on the large texts the limits are there for.
_PROFILES = re.compile(r"profiles:[ \t]*(?:#.*)?\n")
_ITEM = re.compile(r"(?:[ \t]*(?:#.*)?\r?\n)*([ \t]*)-(?=[ \t\r\n]|$)")  # the first item after blank lines


class PolicyLimits(NamedTuple):
    """The limits per policy text (a ConfigMap data key) or policy object (see the module contract)."""

    max_bytes: int = 256 * 1024
    max_documents: int = 64
    max_profiles: int = 256
    max_nodes: int = 100_000

    def refuses(self, request: Json, sizes_only: bool = False) -> str | None:
        """The first limit the object of the admission ``request`` exceeds, unless it opts out of validation
        (``desched.io/skip-validation``) or is not being created or updated; None otherwise. ``sizes_only`` checks
        only the sizes of a ConfigMap's policy texts, which costs no scan of them."""
        kind, obj = str(mapping_or_empty(request.get("kind")).get("kind", "")), request.get("object")
        if request.get("operation") not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
            return None
        reason = self.exceeded(kind, obj, sizes_only)
        return reason if reason is not None and skip(str(request.get("uid")), kind, obj) is None else None

    def exceeded(self, kind: str, obj: Json, sizes_only: bool = False) -> str | None:
        """The first limit the policy object ``obj`` of ``kind`` exceeds, as a reason naming it; None within (see
        :meth:`refuses` for ``sizes_only``)."""
        if kind != "ConfigMap":
            return None if sizes_only else self._object(obj)
        data = mapping_or_empty(obj.get("data"))
        keys, values = configmap_keys(data)
        for key in (*keys, *values):
            reason = self._size(data[key]) if sizes_only else self._text(data[key])
            if reason is not None:
                return f"data[{key}]: {reason}"
        return None

    def _size(self, text: str) -> str | None:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_bytes:
            return f"policy text of {size} bytes exceeds the limit of {self.max_bytes} bytes"
        return None

    def _text(self, text: str) -> str | None:
        reason = self._size(text)
        if reason is not None:
            return reason
        documents = text.count("\n---") + text.startswith("---") + 1
        if documents > self.max_documents:
            return f"{documents} YAML documents exceed the limit of {self.max_documents}"
        profiles = max((_items(text, indent, end) for indent, end in _profile_keys(text)), default=0)
        if profiles > self.max_profiles:
            return f"{profiles} profiles exceed the limit of {self.max_profiles}"
        keys = text.count(": ") + text.count(":\n") + text.count(":\r")
        nodes = 2 * keys + text.count("- ") + text.count("-\n") + text.count(",") + documents
        if nodes > self.max_nodes:
            return f"about {nodes} YAML nodes exceed the limit of {self.max_nodes}"
        return None

    def _object(self, obj: Json) -> str | None:
        size = len(repr(obj).encode("utf-8", "surrogatepass"))
        if size > self.max_bytes:
            return f"object of about {size} bytes exceeds the limit of {self.max_bytes} bytes"
        profiles = mapping_or_empty(obj.get("spec")).get("profiles")
        if isinstance(profiles, list) and len(profiles) > self.max_profiles:
            return f"{len(profiles)} profiles exceed the limit of {self.max_profiles}"
        nodes = count_nodes(obj, sys.maxsize)  # exact: the reason names the count
        if nodes > self.max_nodes:
            return f"{nodes} nodes exceed the limit of {self.max_nodes}"
        return None


def _profile_keys(text: str) -> Iterator[tuple[str, int]]:
    """The indentation and end of every line that is a block key ``profiles:`` (nothing else before it)."""
    for match in _PROFILES.finditer(text):
        indent = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        if not indent.strip(" \t"):
            yield indent, match.end()


def _items(text: str, key_indent: str, key_end: int) -> int:
    """The number of items of the block sequence under a ``profiles:`` key (0 if it is not one): indented
    ``key_indent``, its line ending at ``key_end``."""
    first = _ITEM.match(text, key_end)
    if first is None or len(first.group(1)) < len(key_indent):
        return 0
    indent = re.escape(first.group(1))
    end = re.compile(rf"\n(?!{indent}-[ \t\r\n]|{indent}[ \t]|[ \t]*(?:#|\r?\n|\r?$))").search(text, key_end - 1)
    block = text[key_end - 1 : end.start() if end else len(text)]
    return len(re.findall(rf"\n{indent}-(?=[ \t\r\n]|$)", block))
