"""Writing the new text of a rewritten file: the :class:`Edit` of each rewritten node, and the text with them made.

:class:`Style` is a file's indentation (:func:`detect_style` and :func:`policy_style` read it from composed nodes).
:class:`Emitter` writes plain data (dicts, lists, scalars) as block YAML lines in that style, putting carried comments
before, after or at the end of the line of the output node they belong to, and reusing source text verbatim where the
plan made a :class:`Copy`. :func:`scalar` renders one scalar so that YAML 1.1 readers (PyYAML, and go-yaml, which
upstream uses) read back the same value and type.

Each edit replaces whole lines: :func:`mapping_edit` writes a block policy mapping's entries as the plan's
:class:`Layout` says, :func:`flow_edit` a flow (JSON) policy, :func:`text_edit` a key's migrated text in its scalar
style, :func:`helm_version_edit` the chart's ``deschedulerPolicyAPIVersion``; :func:`apply` makes them. What
changes is decided by :mod:`~desched.migrate._plan`; these only choose how it is written, in the source's own style,
and raise :class:`~desched.migrate._locate.Unsafe` when it cannot be written exactly.
"""

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import yaml
from yaml.resolver import Resolver

from desched.gitops.documents import HELM_POLICY_KEY, HELM_VERSION_KEY
from desched.migrate._locate import Region, Unsafe, block_header, block_indent, child, regions
from desched.migrate._splice import Lines, Path, Tree, content_end, indentation
from desched.migrate.convert import V1ALPHA2

__all__ = [
    "Comments",
    "Copy",
    "Edit",
    "Emitter",
    "Layout",
    "Style",
    "apply",
    "detect_style",
    "double_quoted",
    "flow_edit",
    "helm_version_edit",
    "mapping_edit",
    "policy_style",
    "replaced",
    "restyle",
    "scalar",
    "shift",
    "text_edit",
]

_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_GO_BOOLS = frozenset({"y", "Y", "n", "N"})  # go-yaml v2 (sigs.k8s.io/yaml) reads these as booleans
_GO_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")
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


def detect_style(roots: Iterable[Any], lines: list[str]) -> Style:
    """The most common indentation of the block collections under ``roots`` (composed nodes); the default for what
    they do not show."""
    return _filled(_observed(roots, lines), Style())


def policy_style(policy: Any, document: Any, lines: list[str]) -> Style:
    """The indentation of the node ``policy``; what it does not show, from its ``document`` (not from other
    documents)."""
    own = _observed([policy], lines)
    return _filled(own, detect_style([document], lines) if None in own else Style())


def _filled(found: tuple[int | None, int | None, int | None], base: Style) -> Style:
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


class Edit(NamedTuple):
    """Replace lines ``first``..``stop - 1`` (0-based) with ``lines`` (``first == stop`` inserts)."""

    first: int
    stop: int
    lines: list[str]


def apply(lines: Lines, edits: list[Edit]) -> str:
    """The text of ``lines`` with ``edits`` made; a new line ends as the file's first line does."""
    out: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda edit: (edit.first, edit.stop)):
        if edit.first < position:
            raise Unsafe("overlapping edits")
        out.extend(lines.lines[index] + lines.ends[index] for index in range(position, edit.first))
        if edit.lines:
            if out and not out[-1].endswith(_BREAKS):
                out[-1] += lines.newline
            last = lines.ends[edit.stop - 1] if edit.stop > edit.first else lines.newline
            out.extend(line + lines.newline for line in edit.lines[:-1])
            out.append(edit.lines[-1] + last)
        position = max(position, edit.stop)
    out.extend(lines.lines[index] + lines.ends[index] for index in range(position, len(lines)))
    return "".join(out)


def replaced(lines: Lines, node: Any, text: str) -> str:
    """One line: what stands before ``node`` on its first line, ``text``, and what follows it on its last line."""
    start, end = node.start_mark, node.end_mark
    before: str = lines.lines[start.line][: start.column]
    after: str = lines.lines[end.line][end.column :]
    return before + text + after


class Layout(NamedTuple):
    """What the plan decided for the entries of one block mapping whose new data is ``out``.

    ``kept``: the source entries written as they are (key -> the key's line when its one-line scalar is replaced in
    place, else ``None``); ``placed``: the output keys written after each source entry (``None``: before all);
    ``before``: lines written above a kept entry; ``in_place``: lines left where a removed entry stood; ``loose``:
    lines above everything; ``emitter`` writes the placed keys.
    """

    out: Mapping[str, Any]
    kept: Mapping[str, str | None]
    placed: Mapping[str | None, list[str]]
    before: Mapping[str, list[str]]
    in_place: Mapping[str, list[str]]
    loose: list[str]
    emitter: Emitter

    def write_placed(self, anchor: str | None, column: int, out: list[str]) -> None:
        """Append the entries of the output keys placed after source entry ``anchor``, keys in ``column``."""
        for key in self.placed.get(anchor, []):
            self.emitter.entry(key, self.out[key], (key,), column, out)


def mapping_edit(lines: Lines, entries: list[Region], layout: Layout) -> Edit:
    """The lines of a block mapping's ``entries`` written again as ``layout`` says: a kept entry as it stands, with the
    blank lines and comments before it; the placed keys after the entry they are placed at."""
    column = entries[0].key.start_mark.column
    pad = " " * column
    body = [pad + text for text in layout.loose]
    layout.write_placed(None, column, body)
    first_key_at: int | None = None
    for region in entries:
        key = region.key.value
        gap = lines.lines[region.gap : region.head]
        if key in layout.kept:
            body.extend(gap)
            body.extend(pad + text for text in layout.before.get(key, []))
            if region is entries[0]:
                first_key_at = len(body) + region.line - region.head
            body.extend(_kept(lines, region, layout.kept[key]))
        else:
            body.extend(_removed(gap, layout.in_place.get(key, []), bool(layout.placed.get(key)), pad))
        layout.write_placed(key, column, body)
    prefix = lines.lines[entries[0].line][:column]
    if prefix.strip():  # the mapping is a sequence item
        _dash_first(body, prefix, column, first_key_at)
    return Edit(entries[0].line, entries[-1].last + 1, body)


def _kept(lines: Lines, region: Region, written: str | None) -> list[str]:
    """A kept entry's lines, with the comments above its key; the key's line is ``written`` when that is given."""
    chunk = lines.lines[region.head : region.last + 1]
    if written is not None:
        chunk[region.line - region.head] = written
    return chunk


def _removed(gap: list[str], own: list[str], placed: bool, pad: str) -> list[str]:
    """What stays where a removed entry stood: its ``own`` lines, after the ``gap`` before it (blank lines and loose
    comments), which it takes along when it leaves nothing behind (no own lines, no ``placed`` keys)."""
    if own or placed or any(line.strip() for line in gap):
        return [*gap, *(pad + text for text in own)]
    return []


def _dash_first(body: list[str], prefix: str, column: int, first_key_at: int | None) -> None:
    """In a mapping that is a sequence item, ``prefix`` (the dash before its first key) goes on the first line of
    content of ``body``; the source's first key line (at ``first_key_at``, when kept) loses it."""
    if first_key_at is not None:
        body[first_key_at] = " " * column + body[first_key_at][column:]
    for index, line in enumerate(body):
        if line.strip() and not line.lstrip().startswith("#"):
            body[index] = prefix + line[column:]
            break


def flow_edit(lines: Lines, node: Any, data: Any) -> Edit:
    """A flow-style (or JSON) policy ``node`` written again whole as ``data``, as JSON-compatible flow YAML in the same
    place."""
    start, end = node.start_mark, node.end_mark
    if start.line == end.line:
        return Edit(start.line, end.line + 1, [replaced(lines, node, json.dumps(data, ensure_ascii=False))])
    first = lines.lines[start.line]
    text = json.dumps(data, ensure_ascii=False, indent=2).split("\n")
    pad = " " * (indentation(first) + (2 if first[: start.column].strip() else 0))
    written = [first[: start.column] + text[0], *(pad + line for line in text[1:-1])]
    written.append(pad + text[-1] + lines.lines[end.line][end.column :])
    return Edit(start.line, end.line + 1, written)


def text_edit(lines: Lines, document: Any, key: Any, value: Any, old: str, new: str) -> Edit:
    """``new`` (the migrated text of a ConfigMap key or values string) where ``old`` was, the scalar ``value`` of
    ``key`` in ``document``: a block scalar stays a block (a literal one), a double-quoted scalar stays
    double-quoted, a plain or single-quoted one keeps its style while ``new`` is one line, else becomes a literal
    block one level (in the document's indentation) under its key."""
    if value.style in ("|", ">"):
        return _block_text_edit(lines, value, old, new)
    start, end = value.start_mark, value.end_mark
    if value.style == '"' or "\n" not in new.rstrip("\n"):
        written = double_quoted(new) if value.style == '"' or "\n" in new else restyle(value.style, new)
        return Edit(start.line, end.line + 1, [replaced(lines, value, written)])
    indent = key.start_mark.column + detect_style([document], lines.lines).mapping
    header = replaced(lines, value, "|" + _chomping(new))
    return Edit(start.line, end.line + 1, [header, *_indented(_text_lines(new), indent)])


def _block_text_edit(lines: Lines, value: Any, old: str, new: str) -> Edit:
    """``new`` in the block scalar ``value`` that held ``old``: a literal block keeps its header, a folded one
    becomes a literal block with the same indentation indicator."""
    start = value.start_mark
    indent = block_indent(lines.lines, start.line, start.column)
    if indent is None:
        raise Unsafe("empty block scalar")
    written = _indented(_text_lines(new), indent)
    if value.style == "|":
        return Edit(start.line + 1, start.line + 1 + len(_text_lines(old)), written)
    first = lines.lines[start.line]
    header = block_header(first, start.column)
    assert header is not None
    explicit, end = header
    literal = first[: start.column] + "|" + _chomping(new) + explicit + first[end:]
    return Edit(start.line, content_end(value, lines)[0] + 1, [literal, *written])


def _text_lines(text: str) -> list[str]:
    """The lines of ``text``, the line break that ends it left out."""
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def _indented(lines: list[str], indent: int) -> list[str]:
    return [" " * indent + line if line else "" for line in lines]


def _chomping(text: str) -> str:
    """The block chomping indicator that keeps the line breaks at the end of ``text``."""
    if not text.endswith("\n"):
        return "-"
    return "+" if text.endswith("\n\n") else ""


def helm_version_edit(lines: Lines, values: Any) -> Edit:
    """Set the chart values' ``deschedulerPolicyAPIVersion`` to v1alpha2 (same quoting), or add it right after
    ``deschedulerPolicy``."""
    _, value = child(values, HELM_VERSION_KEY)
    if value is not None and isinstance(value, yaml.ScalarNode) and value.start_mark.line == value.end_mark.line:
        line = value.start_mark.line
        return Edit(line, line + 1, [replaced(lines, value, restyle(value.style, V1ALPHA2))])
    if value is not None:
        raise Unsafe("deschedulerPolicyAPIVersion is not a one-line scalar")
    policy_key, _ = child(values, HELM_POLICY_KEY)
    region = next(region for region in regions(lines, Tree(values), values) if region.key == policy_key)
    pad = " " * policy_key.start_mark.column
    return Edit(region.last + 1, region.last + 1, [f"{pad}{HELM_VERSION_KEY}: {V1ALPHA2}"])
