"""A fast path for the plain YAML that policies are written in.

:func:`compose_simple` reads a strict subset of YAML line by line with precompiled regular expressions and builds
the same :class:`~desched.reading.yamlnodes.YMap`/:class:`~desched.reading.yamlnodes.YSeq` trees, positions included,
that :func:`desched.reading.yamlsrc.load_all` composes from libyaml's events, about 2.5 times faster. Anything outside
the subset makes it return ``None`` so that the caller falls back to libyaml; accepting a text is a promise that
``load_all`` returns equal documents, having spent as many nodes from the
:class:`~desched.reading.yamlnodes.NodeBudget`.

The subset: block mappings and sequences indented with spaces (compact ``- key: value`` and ``- - item`` forms,
sequences at their parent key's indentation), keys and values that are plain scalars on one line or quoted scalars
without escapes, one-line flow sequences and mappings of those (nested too), empty values, comments, blank lines
and bare ``---`` document starts. Refused: tabs, carriage returns and other unusual characters, anchors, aliases,
tags, directives, ``...``, block scalars, multi-line scalars and flow collections, complex and merge keys, scalars
a document consists of, and everything libyaml would reject.
"""

from __future__ import annotations

import re
from typing import Any

from desched.patterns import lazy
from desched.reading.yamlnodes import (
    CACHE_LIMIT,
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    PLAIN_CACHE,
    NodeBudget,
    Position,
    YMap,
    YSeq,
    key_text,
    plain_scalar,
)

__all__ = ["compose_simple"]

# Characters that no class below matches, beyond the line break: libyaml refuses ASCII controls and DEL (tabs are
# refused too); in other texts str.isprintable() screens the rest.
_C = r"\x00-\x1f\x7f"
_ANY = "[^" + _C + "]"
# Plain scalars in block context: no leading indicator, no ": ", " #" or " :", no trailing spaces. In flow context
# also none of "#,[]{}'\"" and ":" only before another such character. Quoted scalars: one line, no escapes.
_PLAIN_BLOCK = (
    r"(?:[^-?:,\[\]{}#&*!|>'\"%@` " + _C + r"]|-(?=[^ " + _C + r"]))[^ :" + _C + r"]*"
    r"(?:(?::(?=[^ " + _C + r"])| +(?=[^ #:" + _C + r"]))[^ :" + _C + r"]*)*"
)  # fmt: skip
_FLOW_CHAR = r"[^ :#,\[\]{}'\"" + _C + r"]"
_PLAIN_FLOW = (
    r"(?:[^-?:,\[\]{}#&*!|>'\"%@` " + _C + r"]|-(?=" + _FLOW_CHAR + r"))" + _FLOW_CHAR
    + r"*(?:(?::(?=[^ :#,\[\]{}'\"?" + _C + r"])| +(?=" + _FLOW_CHAR + r"))" + _FLOW_CHAR + r"*)*"
)  # fmt: skip
# A key that turns out not to be one is given up at once: an atomic group (Python 3.11+) does not backtrack into
# the scalar, which the colon could not follow anyway (the scalar stops only before ": ", " #", " :" and the end).
try:
    re.compile("(?>a)")
    _KEY_PLAIN = "(?>" + _PLAIN_BLOCK + ")"
except re.error:  # Python 3.10 (a test forces this branch)
    _KEY_PLAIN = _PLAIN_BLOCK
_QUOTED = r"\"[^\"\\" + _C + r"]*\"|'(?:[^'" + _C + r"]|'')*'"
_SCALAR = _PLAIN_FLOW + "|" + _QUOTED
_TAIL = r"(?: +(?:#" + _ANY + r"*)?)?"
# Flow collections of plain scalars written the usual way ("[a, b]", "{a: 1, b: 2}": one space after each comma and
# colon, none elsewhere), which split at ", " and ": " since no plain flow scalar holds those. The line pattern only
# finds a bracketed text without brackets, quotes or comments (its own pattern per scalar would be more than half
# of its compile time, the first cost of a one-file lint); _usual checks the scalars and hands any other flow
# collection to _flow (a pattern for each kind of line would cost more to compile than a one-file lint spends
# reading).
_BRACKETED = r"[^\[\]{}#'\"" + _C + r"]*"
_USUAL = r"\[" + _BRACKETED + r"\]|\{" + _BRACKETED + r"\}"
_PLAIN_FLOW_ONLY = lazy(_PLAIN_FLOW)
_PLAIN_FLOW_KNOWN: dict[str, bool] = {}  # text -> whether it is a plain flow scalar
# One row per line, each with its line break: 1 the indentation (or a document start), 2 "- " (more than one
# for nested sequences), 3 a key with its colon and the spaces after it, 4 a plain value, 5 a quoted value (quotes
# included), 6 a bracketed text that may be a usual flow collection and what follows it, 7 another flow collection
# and what follows it. A line outside the subset has no row.
_LINE = re.compile(
    r"^(---" + _TAIL + r"$|(?!---|\.\.\.) *)((?:-(?: +|$))*)"
    + r"((?:" + _KEY_PLAIN + "|" + _QUOTED + r"):(?: +|$))?"
    + r"(?:(" + _PLAIN_BLOCK + r")" + _TAIL
    + r"|(" + _QUOTED + r")" + _TAIL
    + r"|((?:" + _USUAL + r")" + _TAIL + r")"
    + r"|(?:#" + _ANY + r"*)?"
    + r"|([\[{]" + _ANY + r"*))(?:\n|\Z)",
    re.MULTILINE,
)  # fmt: skip
# Something like a block scalar's header ("key: |", "- >-"), the commonest thing outside the subset: refused at once.
_BLOCK_SCALAR = lazy(r"(?:^| )[|>][-+0-9]*(?: *$| +#)", re.MULTILINE)


# The patterns of _flow, compiled when a text first has a flow collection written otherwise than the usual way: a
# flow scalar (1 a plain one, 2 a quoted one), a flow key with its colon (1 the key, quotes included), and what may
# follow a collection on its line.
_ITEM = lazy(r"(" + _PLAIN_FLOW + r")|(" + _QUOTED + r")")
_FLOW_KEY = lazy(r"(" + _SCALAR + r"): +")
_END = lazy(_TAIL)


_KEYS: dict[str, str] = {}  # key, quotes included -> key text
_FIELDS: dict[str, str] = {}  # key with colon and spaces -> key text
_MAX_KEY = 1000  # libyaml looks for a key's colon within 1024 characters
# The value groups of a line that has no value.
_NO_VALUE = ("", "", "", "")
# An open collection: (collection, indentation, is a mapping, key or item positions, value positions, styles).
_Frame = tuple[Any, int, bool, Any, Any, Any]


def _unquote(token: str) -> str:
    """The text of a one-line quoted scalar without escapes, quotes included in ``token``."""
    if token[0] == '"':
        return token[1:-1]
    return token[1:-1].replace("''", "'")


def _key(raw: str) -> str | None:
    """The key text of the key ``raw`` (quotes included); None for a merge key or a key too long for libyaml."""
    try:
        return _KEYS[raw]
    except KeyError:
        if raw == "<<" or len(raw) > _MAX_KEY:
            return None
        text = _unquote(raw) if raw[0] == '"' or raw[0] == "'" else key_text(plain_scalar(raw))
        if len(_KEYS) < CACHE_LIMIT and len(raw) < 64:
            _KEYS[raw] = text
        return text


def _scalar(plain: str, quoted: str) -> tuple[Any, str]:
    """A flow scalar and its style, from the groups of :data:`_ITEM`."""
    if plain:
        return plain_scalar(plain), ""
    return _unquote(quoted), quoted[0]


def _put(frame: _Frame, key: str, key_pos: Position, value: Any, pos: Position) -> int:
    """Attach a collection or an empty value, as yamlsrc does; 1 when ``key`` repeats a key of the mapping."""
    node, _, is_map, positions, value_positions, styles = frame
    if not is_map:
        node.append(value)
        positions.append(pos)
        styles.append("")
        return 0
    repeated = key in node
    if repeated:
        node.duplicates.append((key, key_pos))
    node[key] = value
    positions[key] = key_pos
    value_positions[key] = pos
    styles[key] = ""
    return int(repeated)


def _finish(root: YSeq, duplicates: int) -> Any:
    """The document the stand-in ``root`` received; a mapping learns how many duplicate keys the document has."""
    document = root[0] if root else None
    if isinstance(document, YMap):
        document.nested_duplicates = duplicates
    return document


def _usual(token: str, column: int, lineno: int, depth: int) -> tuple[YMap | YSeq, int, int] | None:
    """The flow collection that starts ``token`` (group 6 of :data:`_LINE`, the rest of a line) at 0-based
    ``column``, its number of duplicate keys and its number of nodes, as :func:`_flow` reads it when it is not
    written the usual way; None when it has a key outside the subset or would open collection number MAX_DEPTH + 1
    (``depth`` are open)."""
    is_sequence = token[0] == "["
    inner = token[1 : token.index("]" if is_sequence else "}")]
    parts = inner.split(", ") if inner else []
    entries = [] if is_sequence else [part.partition(": ") for part in parts]
    texts = parts if is_sequence else [text for key, _, value in entries for text in (key, value)]
    if not (all(colon for _, colon, _ in entries) and _plain_flow(texts)):
        return _flow(token, column, lineno, depth)
    if depth >= MAX_DEPTH:
        return None
    cache = PLAIN_CACHE
    index = column + 2  # 1-based column of the character after the bracket
    if is_sequence:
        sequence = YSeq(lineno, column + 1)
        append = sequence.append
        add_position = sequence.item_pos.append
        add_style = sequence.styles.append
        for item in parts:
            add_position((lineno, index))
            append(cache[item] if item in cache else plain_scalar(item))
            add_style("")
            index += len(item) + 2
        return sequence, 0, len(sequence) + 1
    mapping = YMap(lineno, column + 1)
    key_positions = mapping.key_pos
    value_positions = mapping.value_pos
    styles = mapping.styles
    duplicates = 0
    for raw, _, plain in entries:
        key = _KEYS.get(raw)
        if key is None:
            key = _key(raw)
            if key is None:
                return None
        key_pos = (lineno, index)
        index += len(raw) + 2
        value_positions[key] = (lineno, index)
        mapping[key] = cache[plain] if plain in cache else plain_scalar(plain)
        styles[key] = ""
        index += len(plain) + 2
        if key in key_positions:
            mapping.duplicates.append((key, key_pos))
            duplicates += 1
        key_positions[key] = key_pos
    return mapping, duplicates, 2 * len(entries) + 1


def _plain_flow(texts: list[str]) -> bool:
    """Whether each of ``texts`` is a plain flow scalar; the answers are remembered (while there is room), as flow
    collections repeat their scalars across files."""
    known = _PLAIN_FLOW_KNOWN
    for text in texts:
        plain = known.get(text)
        if plain is None:
            plain = _PLAIN_FLOW_ONLY().fullmatch(text) is not None
            if len(known) < CACHE_LIMIT and len(text) < 64:
                known[text] = plain
        if not plain:
            return False
    return True


def _flow(text: str, column: int, lineno: int, depth: int) -> tuple[YMap | YSeq, int, int] | None:
    """The flow collection ``text`` (the rest of a line, at 0-based ``column``), its number of duplicate keys and
    its number of nodes; None unless the collection ends the line (but for a comment) and lies within the subset.

    ``depth`` counts the collections already open.
    """
    tally = [0, 0]
    parsed = _flow_node(text, 0, column + 1, lineno, depth, tally)
    if parsed is None or _END().fullmatch(text, parsed[1]) is None:
        return None
    return parsed[0], tally[0], tally[1]


def _skip(text: str, index: int) -> int:
    """The index of the first character from ``index`` on that is not a space."""
    return len(text) - len(text[index:].lstrip(" "))


def _flow_node(
    text: str, start: int, base: int, lineno: int, depth: int, tally: list[int]
) -> tuple[YMap | YSeq, int] | None:
    """The flow collection opening at ``text[start]`` and the index after it; ``text[index]`` stands in 1-based
    column ``base + index``; duplicate keys count in ``tally[0]``, nodes in ``tally[1]``."""
    if depth >= MAX_DEPTH:
        return None
    item_pattern, key_pattern = _ITEM(), _FLOW_KEY()
    tally[1] += 1
    node: YMap | YSeq
    if text[start] == "{":
        node = YMap(lineno, base + start)
        close = "}"
    else:
        node = YSeq(lineno, base + start)
        close = "]"
    index = _skip(text, start + 1)
    if text[index : index + 1] == close:
        return node, index + 1
    while True:
        key = ""
        key_pos = (0, 0)
        if isinstance(node, YMap):
            found = key_pattern.match(text, index)
            if found is None:
                return None
            found_key = _key(found.group(1))
            if found_key is None:
                return None
            key = found_key
            key_pos = (lineno, base + index)
            index = found.end()
        pos = (lineno, base + index)
        char = text[index : index + 1]
        if char == "[" or char == "{":
            nested = _flow_node(text, index, base, lineno, depth + 1, tally)
            if nested is None:
                return None
            value, index = nested
            style = ""
        else:
            item = item_pattern.match(text, index)
            if item is None:
                return None
            value, style = _scalar(*item.groups())
            index = item.end()
            tally[1] += 1
        if isinstance(node, YMap):
            tally[1] += 1  # the key
            if key in node:
                node.duplicates.append((key, key_pos))
                tally[0] += 1
            node[key] = value
            node.key_pos[key] = key_pos
            node.value_pos[key] = pos
            node.styles[key] = style
        else:
            node.append(value)
            node.item_pos.append(pos)
            node.styles.append(style)
        index = _skip(text, index)
        char = text[index : index + 1]
        if char == ",":
            index = _skip(text, index + 1)
            char = text[index : index + 1]
        elif char != close:
            return None
        if char == close:
            return node, index + 1


def _written(value: tuple[str, ...], column: int, lineno: int, open_frames: int) -> tuple[Any, str, int, int] | None:
    """The value written on a line at 0-based ``column`` (the value groups of :data:`_LINE`, one of them set): the
    value, its style, the number of duplicate keys in it and its number of nodes; None outside the subset.
    ``open_frames`` counts the composer's frames, the stand-in bottom one included."""
    plain, quoted, usual, flow = value
    if plain:
        return (PLAIN_CACHE[plain] if plain in PLAIN_CACHE else plain_scalar(plain)), "", 0, 1
    if quoted:
        return _unquote(quoted), quoted[0], 0, 1
    parsed = _flow(flow, column, lineno, open_frames - 1) if flow else _usual(usual, column, lineno, open_frames - 1)
    return None if parsed is None else (parsed[0], "", parsed[1], parsed[2])


def _rows(text: str) -> list[tuple[str, ...]] | None:
    """The tokenizer: one row of :data:`_LINE`'s groups per line of ``text``, or None when the text or one of its
    lines is outside the subset (including texts longer than a file's node limit)."""
    # Longer texts go to libyaml: the rows of all their lines, held at once, would take up to twice its memory.
    if len(text) > MAX_EXPANDED_NODES:
        return None
    # isprintable() refuses all that libyaml refuses or reads as a line break, and more (no-break spaces...).
    if not text.isascii() and not text.replace("\n", " ").isprintable():
        return None
    if ("|" in text or ">" in text) and _BLOCK_SCALAR().search(text):
        return None
    rows: list[tuple[str, ...]] = _LINE.findall(text)
    return rows if len(rows) == text.count("\n") + 1 else None  # else some line has no row


class _Composer:
    """The stack builder: fed the rows of a text line by line, it builds the documents yamlsrc would compose, and
    counts their nodes as yamlsrc does (``nodes``: every scalar, keys and empty values included, and collection).

    The open collections are kept innermost last as :data:`_Frame` tuples; the bottom frame is a stand-in sequence
    that receives the document's root. A method returning False means the line is outside the subset.
    """

    __slots__ = (
        "documents",
        "duplicates",
        "frame",
        "nodes",
        "null_pos",
        "pending",
        "pending_key",
        "pending_key_pos",
        "root",
        "stack",
        "started",
    )

    def __init__(self) -> None:
        self.documents: list[Any] = []
        self.nodes = 0
        self._begin()

    def _begin(self) -> None:
        self.root = YSeq(0, 0)
        self.frame: _Frame = (self.root, -1, False, self.root.item_pos, None, self.root.styles)
        self.stack = [self.frame]
        self.started = False  # the document had content or an explicit start
        self.pending = True  # the innermost collection waits for a value (the bottom frame for the root)
        self.pending_key = ""  # the key that waits, on a mapping
        self.pending_key_pos: Position = (0, 0)
        self.null_pos: Position = (0, 0)  # where an empty value would stand
        self.duplicates = 0

    def end_document(self) -> None:
        """Close the document being built, if it has begun (a waiting value is empty)."""
        if self.started:
            if self.pending and len(self.stack) > 1:
                self.duplicates += _put(self.frame, self.pending_key, self.pending_key_pos, None, self.null_pos)
                self.nodes += 1
            if not self.root:
                self.nodes += 1  # an empty document: libyaml reads one empty scalar
            self.documents.append(_finish(self.root, self.duplicates))

    def _push(self, opened: _Frame) -> None:
        self.stack.append(opened)
        self.frame = opened

    def _open_pending(self, lineno: int, column: int, dash: str) -> bool:
        """The value that waits is a block collection starting on this line: open it (False past the depth limit)."""
        self.pending = False
        if len(self.stack) > MAX_DEPTH:
            return False
        self.nodes += 1
        pos = (lineno, column + 1)
        opened: _Frame
        if dash:
            sequence = YSeq(lineno, column + 1)
            opened = (sequence, column, False, sequence.item_pos, None, sequence.styles)
        else:
            mapping = YMap(lineno, column + 1)
            opened = (mapping, column, True, mapping.key_pos, mapping.value_pos, mapping.styles)
        node, _, is_map, positions, value_positions, styles = self.frame
        collection = opened[0]
        if is_map:
            key = self.pending_key
            if key in node:
                node.duplicates.append((key, self.pending_key_pos))
                self.duplicates += 1
            node[key] = collection
            positions[key] = self.pending_key_pos
            value_positions[key] = pos
            styles[key] = ""
        else:
            node.append(collection)
            positions.append(pos)
            styles.append("")
        self._push(opened)
        return True

    def _settle(self, column: int, dash: str) -> bool:
        """Empty the waiting value, if any, and close collections until the one a line at ``column`` belongs to;
        False when the line fits no open collection."""
        if self.pending:
            self.pending = False
            self.duplicates += _put(self.frame, self.pending_key, self.pending_key_pos, None, self.null_pos)
            self.nodes += 1
        frame = self.frame
        if column < frame[1] or (column == frame[1] and not frame[2] and not dash):
            stack = self.stack
            while True:  # close collections (a sequence at its mapping's indentation included)
                stack.pop()
                frame = stack[-1]
                if column > frame[1] or (column == frame[1] and (frame[2] or dash)):
                    break
            self.frame = frame
        return column == frame[1] and not (frame[2] and dash)

    def _open_dashes(self, lineno: int, column: int, dash: str) -> bool:
        """``- - item``: every dash after the first opens a sequence in the item (False past the depth limit)."""
        for offset, char in enumerate(dash):
            if char == "-" and offset:
                if len(self.stack) > MAX_DEPTH:
                    return False
                self.nodes += 1
                sequence = YSeq(lineno, column + offset + 1)
                node, _, _, positions, _, styles = self.frame
                node.append(sequence)
                positions.append((lineno, column + offset + 1))
                styles.append("")
                self._push((sequence, column + offset, False, sequence.item_pos, None, sequence.styles))
        return True

    def _item(self, lineno: int, column: int, dash: str, value: tuple[str, ...]) -> bool:
        """A sequence item (``- value``) at 0-based ``column``; an empty one waits for a block collection."""
        if value == _NO_VALUE:
            self.pending = True
            self.null_pos = (lineno, column - len(dash) + dash.rfind("-") + 2)
            return True
        written = _written(value, column, lineno, len(self.stack))
        if written is None:
            return False
        item, style, found, nodes = written
        self.duplicates += found
        self.nodes += nodes
        node, _, _, positions, _, styles = self.frame
        node.append(item)
        positions.append((lineno, column + 1))
        styles.append(style)
        return True

    def _open_item_mapping(self, lineno: int, column: int) -> bool:
        """``- key: value``: a mapping opens at the key (False past the depth limit)."""
        if len(self.stack) > MAX_DEPTH:
            return False
        self.nodes += 1
        mapping = YMap(lineno, column + 1)
        node, _, _, positions, _, styles = self.frame
        node.append(mapping)
        positions.append((lineno, column + 1))
        styles.append("")
        self._push((mapping, column, True, mapping.key_pos, mapping.value_pos, mapping.styles))
        return True

    def _entry(self, lineno: int, column: int, field: str, value: tuple[str, ...]) -> bool:
        """``key: value`` of the innermost mapping at 0-based ``column``; an empty value waits."""
        key = _FIELDS.get(field)
        if key is None:
            key = _key(field.rstrip(" ")[:-1])
            if key is None:
                return False
            if len(_FIELDS) < CACHE_LIMIT and len(field) < 64:
                _FIELDS[field] = key
        self.nodes += 1
        if value == _NO_VALUE:
            self.pending = True
            self.pending_key = key
            self.pending_key_pos = (lineno, column + 1)
            self.null_pos = (lineno, column + len(field.rstrip(" ")) + 1)
            return True
        written = _written(value, column + len(field), lineno, len(self.stack))
        if written is None:
            return False
        item, style, found, nodes = written
        self.nodes += nodes
        node, _, _, positions, value_positions, styles = self.frame
        key_pos = (lineno, column + 1)
        if key in node:
            node.duplicates.append((key, key_pos))
            found += 1
        self.duplicates += found
        node[key] = item
        positions[key] = key_pos
        value_positions[key] = (lineno, column + len(field) + 1)
        styles[key] = style
        return True

    def feed(self, lineno: int, row: tuple[str, ...]) -> bool:
        """Add line ``lineno`` (its :data:`_LINE` groups); False when it is outside the subset."""
        indent, dash, field = row[0], row[1], row[2]
        value = row[3:]
        if not dash and not field:
            if value != _NO_VALUE:
                return False  # a scalar or flow collection standing alone
            if indent[:1] == "-":  # a document start
                self.end_document()
                self._begin()
                self.started = True
            return True  # or a comment or a blank line
        column = len(indent)
        frame = self.frame
        if self.pending or dash or column != frame[1] or not frame[2]:
            # Anything but one more key of the innermost mapping: find or open the collection the line belongs to.
            self.started = True
            pending = self.pending and (column > frame[1] or (column == frame[1] and frame[2] and bool(dash)))
            if not (self._open_pending(lineno, column, dash) if pending else self._settle(column, dash)):
                return False
            if dash:
                if len(dash) > 2 and dash.rfind("-") and not self._open_dashes(lineno, column, dash):
                    return False
                column += len(dash)
                if not field:
                    return self._item(lineno, column, dash, value)
                if not self._open_item_mapping(lineno, column):
                    return False
        return self._entry(lineno, column, field, value)


def compose_simple(text: str, budget: NodeBudget | None = None) -> list[Any] | None:
    """The documents of ``text`` exactly as yamlsrc.load_all composes them, their nodes spent from ``budget``
    (default: a budget of its own), or None when ``text`` is outside the simple subset this scanner understands or
    holds more nodes than ``budget`` has left (the caller then falls back to libyaml, which says where)."""
    rows = _rows(text)
    if rows is None:
        return None
    composer = _Composer()
    feed = composer.feed
    for lineno, row in enumerate(rows, 1):
        if not feed(lineno, row):
            return None
    composer.end_document()
    budget = budget if budget is not None else NodeBudget()
    if composer.nodes > budget.left:
        return None
    budget.left -= composer.nodes
    return composer.documents
