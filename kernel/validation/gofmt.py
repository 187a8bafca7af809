"""Go's text formatting, as far as upstream's error messages need it.

``go_quote`` is ``strconv.Quote`` (``%q``), ``go_list`` is ``%v`` of a string slice, ``go_quoted_list`` is ``%q`` of
one, ``go_json_strings`` is ``json.Marshal`` of a ``[]string`` and ``go_sharp_strings`` is ``%#v`` of one.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["go_json_strings", "go_list", "go_quote", "go_quoted_list", "go_sharp_strings"]

_SIMPLE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_quote(text: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal with Go's escapes.

    >>> go_quote('a"b\\n')
    '"a\\\\"b\\\\n"'
    """
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")  # a lone surrogate cannot exist in a Go string; Go shows the replacement rune
        elif char.isprintable():
            out.append(char)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_list(values: Iterable[str]) -> str:
    """``%v`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(values) + "]"


def go_quoted_list(values: Iterable[str]) -> str:
    """``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(value) for value in values) + "]"


def go_json_strings(values: list[str] | None) -> str:
    """``json.Marshal`` of a ``[]string``; ``None`` is a nil slice (``null``)."""
    if values is None:
        return "null"
    import json  # only a message that quotes a list pays for it: the lint path of a clean policy never does

    parts = []
    for value in values:
        encoded = json.dumps(value, ensure_ascii=False)
        for char, escape in _JSON_ESCAPES.items():
            encoded = encoded.replace(char, escape)
        parts.append(encoded)
    return "[" + ",".join(parts) + "]"


def go_sharp_strings(values: list[str] | None) -> str:
    """``%#v`` of a ``[]string``: ``[]string(nil)`` or ``[]string{"a", "b"}``."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(value) for value in values) + "}"
