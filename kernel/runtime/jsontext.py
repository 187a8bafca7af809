"""JSON text as ``json.dumps(value, indent=2)`` writes it, faster for large documents.

``json.dumps`` with ``indent`` runs the pure-Python encoder, one generator step per token: for the tens of thousands of
flat records ``desched simulate`` reports on a large cluster, that is seconds. :func:`dumps` writes the same text
(the tests hold it byte-identical on arbitrary JSON) by joining strings, with the C string escaper. :func:`write`
writes the same text to a stream one member and one list item at a time, so that a report never exists whole as one
string (on a large cluster, hundreds of megabytes at the peak).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any, TextIO

__all__ = ["dumps", "write"]


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2)``; raises ``TypeError`` for what JSON cannot hold, as it does."""
    return _dump(value, "\n")


def write(value: Any, stream: TextIO) -> None:
    """:func:`dumps` of ``value`` written to ``stream``, a mapping's members and their lists' items one at a time.
    On ``TypeError`` part of the text may have been written."""
    if not isinstance(value, dict) or not value:
        stream.write(_dump(value, "\n"))
        return
    stream.write("{")
    for position, (key, item) in enumerate(value.items()):
        stream.write(("," if position else "") + "\n  " + _key(key) + ": ")
        if isinstance(item, (list, tuple)) and item:
            stream.write("[")
            for index, element in enumerate(item):
                stream.write(("," if index else "") + "\n    " + _dump(element, "\n    "))
            stream.write("\n  ]")
        else:
            stream.write(_dump(item, "\n  "))
    stream.write("\n}")


def _dump(value: Any, newline: str) -> str:
    if isinstance(value, str):
        return str(encode_basestring_ascii(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return json.dumps(value)
    inner = newline + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        separator = "," + inner
        return (
            "{"
            + inner
            + separator.join(_key(key) + ": " + _dump(item, inner) for key, item in value.items())
            + newline
            + "}"
        )
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join(_dump(item, inner) for item in value) + newline + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """A mapping key as JSON writes it: strings as they are; true, false, null and numbers as their text."""
    if isinstance(key, str):
        return str(encode_basestring_ascii(key))
    if key is None or isinstance(key, (bool, int, float)):
        return '"' + _dump(key, "") + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
