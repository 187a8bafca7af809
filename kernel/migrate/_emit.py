"""Block-style YAML text for converted policy data, in the indentation the source file already uses.

:class:`Style` is a file's indentation (:func:`detect_style` reads it from composed nodes). :class:`Emitter` writes
plain data (dicts, lists, scalars) as block YAML lines in that style, putting carried comments before, after or at the
end of the line of the output node they belong to, and reusing source text verbatim where the rewrite planned a
:class:`Copy`. :func:`scalar` renders one scalar so that YAML 1.1 readers (PyYAML, and go-yaml, which upstream
uses) read back the same value and type.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import yaml
from yaml.resolver import Resolver

__all__ = [
    "Comments",
    "Copy",
    "Emitter",
    "Path",
    "Style",
    "detect_style",
    "double_quoted",
    "indentation",
    "restyle",
    "scalar",
    "shift",
]

Path = tuple[str | int, ...]

_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_GO_BOOLS = frozenset({"y", "Y", "n", "N"})  # go-yaml v2 (sigs.k8s.io/yaml) reads these as booleans
_GO_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_BREAKS = frozenset("\n\r\x85\u2028\u2029")
_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\xa0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def _printable(char: str) -> bool:
    """YAML's c-printable, minus the line breaks and BOM that would change a scalar's meaning."""
    code = ord(char)
    if code < 0x20:
        return False
    if code < 0x7F:
        return True
    return code >= 0xA0 and not (0xD800 <= code <= 0xDFFF) and code not in (0xFEFF, 0xFFFE, 0xFFFF, 0x2028, 0x2029)


@functools.lru_cache(maxsize=4096)
def _plain_safe(text: str) -> bool:
    """True when ``text`` can be written unquoted in block context and is read back as this string."""
    if not text or text != text.strip(" ") or text[0] in _INDICATORS or text in _GO_BOOLS:
        return False
    if ": " in text or " #" in text or text.endswith(":") or not all(_printable(char) for char in text):
        return False
    for _tag, pattern in Resolver.yaml_implicit_resolvers.get(text[0], ()):
        if pattern.match(text):
            return False
    return not _GO_FLOAT.match(text)


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (also a valid JSON string for printable text)."""
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif _printable(char):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
    out.append('"')
    return "".join(out)


def _single_quoted(text: str) -> str:
    if any(char in _BREAKS or not (_printable(char) or char == "\t") for char in text):
        return double_quoted(text)
    return "'" + text.replace("'", "''") + "'"


def scalar(value: Any) -> str:
    """One scalar as block-context YAML text: plain when that reads back the same, else double-quoted."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"  # YAML 1.1 resolvers need the dot
        return text
    if isinstance(value, str):
        return value if _plain_safe(value) else double_quoted(value)
    if isinstance(value, dict) and not value:
        return "{}"
    if isinstance(value, list) and not value:
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} as a YAML scalar")


def restyle(style: str | None, value: Any) -> str:
    """``value`` written in a source scalar's quoting ``style`` (``None``/``""`` plain, ``'`` or ``"``)."""
    if isinstance(value, str):
        if style == "'":
            return _single_quoted(value)
        if style == '"':
            return double_quoted(value)
    return scalar(value)


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def shift(lines: Iterable[str], delta: int) -> Iterator[str]:
    """Source lines moved ``delta`` columns (blank lines become empty; comments never go below column 0)."""
    for line in lines:
        if not line.strip():
            yield ""
        elif delta >= 0:
            yield " " * delta + line
        else:
            yield line[min(indentation(line), -delta) :]


class Style(NamedTuple):
    """Block indentation: ``mapping`` for nested keys, ``offset`` of a sequence's dash under its key (0 means
    ``key:`` then ``- item`` in the same column), ``dash`` from the dash to the item's content."""

    mapping: int = 2
    offset: int = 2
    dash: int = 2


def detect_style(roots: Iterable[Any], lines: list[str], fallback: Style | None = None) -> Style:
    """The most common indentation of the block collections under ``roots`` (composed nodes); ``fallback`` (or the
    default) for what they do not show."""
    found = _observed(roots, lines)
    base = fallback or Style()
    return Style(*(value if value is not None else default for value, default in zip(found, base, strict=True)))


def _observed(roots: Iterable[Any], lines: list[str]) -> tuple[int | None, int | None, int | None]:
    mapping: Counter[int] = Counter()
    offset: Counter[int] = Counter()
    dash: Counter[int] = Counter()
    stack = [root for root in roots if isinstance(root, yaml.MappingNode)]
    seen = 0
    while stack and seen < 400:
        node = stack.pop()
        seen += 1
        for key, value in node.value:
            if isinstance(value, yaml.MappingNode):
                if not value.flow_style and value.value:
                    child = value.value[0][0].start_mark
                    if child.line > key.start_mark.line:
                        mapping[child.column - key.start_mark.column] += 1
                stack.append(value)
            elif isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
                first = value.value[0].start_mark
                text = lines[first.line] if first.line < len(lines) else ""
                at = text.rfind("-", 0, first.column)
                if first.line > key.start_mark.line and at >= 0 and not text[:at].strip():
                    offset[at - key.start_mark.column] += 1
                    dash[first.column - at] += 1
                stack.extend(item for item in value.value if isinstance(item, yaml.MappingNode))
    return _most_common(mapping, 1), _most_common(offset, 0), _most_common(dash, 2)


def _most_common(counts: Counter[int], least: int) -> int | None:
    values = [value for value, _ in counts.most_common() if least <= value <= 8]
    return values[0] if values else None


class Comments:
    """Comment texts (each starting with ``#``) carried to one output node."""

    __slots__ = ("eol", "head", "tail")

    def __init__(self) -> None:
        self.head: list[str] = []
        self.eol: str | None = None
        self.tail: list[str] = []


class Copy(NamedTuple):
    """Source text reused for an output node: ``inline`` (one-line scalar or flow collection) or block ``lines``
    whose first key or dash stands in ``column``."""

    inline: str | None
    lines: list[str]
    column: int


class Emitter:
    """Writes plain data as block YAML lines (without line ends) in a :class:`Style`."""

    __slots__ = ("comments", "copies", "style")

    def __init__(self, style: Style, comments: Mapping[Path, Comments], copies: Mapping[Path, Copy]) -> None:
        self.style = style
        self.comments = comments
        self.copies = copies

    def entry(self, key: str, value: Any, path: Path, column: int, out: list[str]) -> None:
        """Append the lines of ``key: value`` with the key in ``column``; ``path`` is the output path of the value."""
        comments = self.comments.get(path)
        pad = " " * column
        if comments is not None:
            out.extend(pad + text for text in comments.head)
        eol = f"  {comments.eol}" if comments is not None and comments.eol else ""
        head = f"{pad}{scalar(key)}:"
        copy = self.copies.get(path)
        nested = isinstance(value, (dict, list)) and bool(value)
        if copy is not None and copy.inline is not None:
            out.append(f"{head} {copy.inline}{eol}")
        elif not nested:
            out.append(f"{head} {scalar(value)}{eol}")
        else:
            out.append(head + eol)
            child = column + (self.style.mapping if isinstance(value, dict) else self.style.offset)
            if copy is not None:
                out.extend(shift(copy.lines, child - copy.column))
            elif isinstance(value, dict):
                self.mapping(value, path, child, out)
            else:
                self._sequence(value, path, child, out)
        if comments is not None and comments.tail:
            tail = " " * (column + self.style.mapping if nested else column)
            out.extend(tail + text for text in comments.tail)

    def mapping(self, value: Mapping[str, Any], path: Path, column: int, out: list[str]) -> None:
        for key, item in value.items():
            self.entry(key, item, (*path, key), column, out)

    def _sequence(self, items: list[Any], path: Path, column: int, out: list[str]) -> None:
        pad = " " * column
        dash = "-" + " " * (self.style.dash - 1)
        inner = column + self.style.dash
        for index, item in enumerate(items):
            ipath = (*path, index)
            comments = self.comments.get(ipath)
            if comments is not None:
                out.extend(pad + text for text in comments.head)
            eol = f"  {comments.eol}" if comments is not None and comments.eol else ""
            copy = self.copies.get(ipath)
            if copy is not None and copy.inline is not None:
                out.append(f"{pad}{dash}{copy.inline}{eol}")
            elif not (isinstance(item, (dict, list)) and item):
                out.append(f"{pad}{dash}{scalar(item)}{eol}")
            else:
                sub: list[str] = []
                if copy is not None:
                    sub.extend(shift(copy.lines, inner - copy.column))
                elif isinstance(item, dict):
                    self.mapping(item, ipath, inner, sub)
                else:
                    self._sequence(item, ipath, inner, sub)
                first = next(i for i, line in enumerate(sub) if not line.lstrip().startswith("#"))
                out.extend(pad + line.lstrip() for line in sub[:first])
                if eol:
                    out.append(pad + eol.lstrip())
                out.append(pad + dash + sub[first][inner:])
                out.extend(sub[first + 1 :])
            if comments is not None and comments.tail:
                out.extend(" " * inner + text for text in comments.tail)
