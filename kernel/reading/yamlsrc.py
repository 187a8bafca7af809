"""YAML loading that keeps source positions and refuses hostile input.

Documents are composed from libyaml's event stream (PyYAML's C parser) into plain ``dict``/``list``
subclasses, :class:`YMap` and :class:`YSeq` (:mod:`desched.reading.yamlnodes`), that remember where every key and value
stands in the source (1-based line and column). Rules work on ordinary Python data; positions are looked up only
when a finding is reported (:func:`locate`). The plain block YAML policies are mostly written in is read by a
faster scanner (:mod:`desched.reading._yamlfast`) that composes exactly the same documents, or declines.

The composer is iterative, so deep nesting cannot exhaust the C or Python stack; it stops with a
:class:`YamlError` past :data:`MAX_DEPTH` levels, and as soon as the text holds more YAML nodes than its
:class:`NodeBudget` has left (by default :data:`MAX_EXPANDED_NODES`), aliases counted as the nodes they stand for,
so that a "billion laughs" alias bomb stops too. Aliases share the anchored object, the way PyYAML does, so memory
stays bounded by the nodes read. The cyclic garbage collector is paused while a text is composed
(:mod:`desched.runtime.collector`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from desched.errors import InputError
from desched.reading._yamlfast import compose_simple
from desched.reading.yamlnodes import (
    BOOLEANS,
    GO_FLOAT,
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    NodeBudget,
    Position,
    YMap,
    YSeq,
    key_text,
    plain_scalar,
    to_float,
    to_int,
)
from desched.runtime.collector import paused

__all__ = [
    "BOOLEANS",
    "GO_FLOAT",
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "NodeBudget",
    "NodeLimitError",
    "Position",
    "YMap",
    "YSeq",
    "YamlError",
    "key_text",
    "load_all",
    "locate",
    "to_float",
    "to_int",
]

_TAG = "tag:yaml.org,2002:"


class YamlError(InputError):
    """The text is not YAML we accept; ``line``/``column`` are 1-based."""


class NodeLimitError(YamlError):
    """The text holds more YAML nodes than its budget has left; the position is the node past it."""


def _scalar(event: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        return plain_scalar(event.value) if event.implicit[0] else event.value
    kind = tag[len(_TAG) :] if tag.startswith(_TAG) else ""
    text = event.value
    try:
        if kind == "int":
            return to_int(text)
        if kind == "float":
            return to_float(text)
    except ValueError as exc:
        raise YamlError(f"cannot read {text!r} as !!{kind}", *_mark(event)) from exc
    if kind == "bool" and text in BOOLEANS:
        return BOOLEANS[text]
    if kind == "null":
        return None
    return text


def _mark(event: Any) -> Position:
    mark = event.start_mark
    return mark.line + 1, mark.column + 1


class _Frame:
    """One open collection on the composer's stack."""

    __slots__ = ("anchor", "key", "key_pos", "merge_pending", "node", "weight")

    def __init__(self, node: YMap | YSeq, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.key: str | None = None
        self.key_pos: Position = (0, 0)
        self.weight = 1
        self.merge_pending = False


def _over_budget(budget: NodeBudget, aliased: bool, pos: Position) -> NodeLimitError:
    """The error for a text whose nodes exceed what ``budget`` had left, at the node ``pos`` that did."""
    if aliased:
        return NodeLimitError(f"YAML expands to more than {budget.limit} nodes through aliases (alias bomb?)", *pos)
    return NodeLimitError(f"more than {budget.limit} YAML nodes, the limit per file; not read", *pos)


def _compose(parser: Any, max_depth: int, budget: NodeBudget) -> Iterator[Any]:
    from yaml.events import (
        AliasEvent,
        DocumentEndEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )

    anchors: dict[str, tuple[Any, int]] = {}
    stack: list[_Frame] = []
    expanded = 0  # nodes of the text so far: a collection counts once closed, an alias the nodes it stands for
    left = budget.left
    aliased = False
    duplicates = 0
    document: Any = None

    def attach(value: Any, pos: Position, style: str, weight: int) -> None:
        nonlocal document, expanded, duplicates
        expanded += weight
        if expanded > left:
            raise _over_budget(budget, aliased, pos)
        if not stack:
            document = value
            return
        frame = stack[-1]
        frame.weight += weight
        node = frame.node
        if isinstance(node, YSeq):
            node.append(value)
            node.item_pos.append(pos)
            node.styles.append(style)
            return
        if frame.key is None:
            if isinstance(value, (YMap, YSeq)):
                raise YamlError("a mapping key must be a scalar", *pos)
            frame.key = key_text(value)
            frame.key_pos = pos
            frame.merge_pending = frame.key == "<<" and style == ""
            return
        key, frame.key = frame.key, None
        if frame.merge_pending:
            frame.merge_pending = False
            _merge(node, value, pos)
            return
        if key in node:
            node.duplicates.append((key, frame.key_pos))
            duplicates += 1
        node[key] = value
        node.key_pos[key] = frame.key_pos
        node.value_pos[key] = pos
        node.styles[key] = style

    get = parser.get_event
    try:
        while True:
            event = get()
            cls = event.__class__
            if cls is ScalarEvent:
                value = _scalar(event)
                if event.anchor:
                    anchors[event.anchor] = (value, 1)
                mark = event.start_mark
                attach(value, (mark.line + 1, mark.column + 1), event.style or "", 1)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if len(stack) >= max_depth:
                    raise YamlError(f"nesting deeper than {max_depth} levels", *_mark(event))
                line, column = _mark(event)
                node: YMap | YSeq = YMap(line, column) if cls is MappingStartEvent else YSeq(line, column)
                frame = _Frame(node, event.anchor)
                stack.append(frame)
                if event.anchor:
                    anchors[event.anchor] = (node, 0)  # weight filled in when the collection closes
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                frame = stack.pop()
                anchor = frame.anchor
                if anchor and anchors[anchor][0] is frame.node:  # unless a node inside took the anchor's name
                    anchors[anchor] = (frame.node, frame.weight)
                expanded -= frame.weight - 1  # children were counted as they attached
                attach(frame.node, (frame.node.line, frame.node.column), "", frame.weight)
            elif cls is AliasEvent:
                if event.anchor not in anchors:
                    raise YamlError(f"found undefined alias {event.anchor!r}", *_mark(event))
                value, weight = anchors[event.anchor]
                aliased = True
                attach(value, _mark(event), "", max(weight, 1))
            elif cls is DocumentEndEvent:
                if isinstance(document, YMap):
                    document.nested_duplicates = duplicates
                yield document
                document = None
                anchors.clear()
                duplicates = 0
            elif cls is StreamEndEvent:
                return
    finally:  # what was read is spent, also when the text is refused: later texts of the file cannot repeat it
        budget.left = max(0, left - expanded)


def _merge(node: YMap, value: Any, pos: Position) -> None:
    """Apply a ``<<`` merge key: earlier and explicit keys win."""
    sources = value if isinstance(value, YSeq) else [value]
    for source in sources:
        if not isinstance(source, YMap):
            raise YamlError("a merge key needs a mapping or a list of mappings", *pos)
        for key, item in source.items():
            if key not in node:
                node[key] = item
                node.key_pos[key] = source.key_pos[key]
                node.value_pos[key] = source.value_pos[key]
                node.styles[key] = source.styles[key]


def load_all(text: str, *, max_depth: int = MAX_DEPTH, budget: NodeBudget | None = None) -> list[Any]:
    """Parse every document of ``text``, spending its nodes from ``budget`` (default: a budget of its own); raises
    :class:`YamlError` with the position of the first problem, the node past the budget included."""
    with paused():
        return _load_all(text, max_depth, budget if budget is not None else NodeBudget())


def _load_all(text: str, max_depth: int, budget: NodeBudget) -> list[Any]:
    if max_depth == MAX_DEPTH:  # the depth limit the fast scanner enforces
        documents = compose_simple(text, budget)
        if documents is not None:
            return documents
    import yaml  # only what the fast scanner declines pays for PyYAML's import

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser, when PyYAML was built with it
    try:
        parser = loader(text)
        try:
            return list(_compose(parser, max_depth, budget))
        finally:
            parser.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} {exc.context}"
        raise YamlError(f"invalid YAML: {problem}", line, column) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"invalid YAML: {exc}") from None
    except TypeError as exc:
        raise YamlError(f"invalid YAML: {exc}") from None


def locate(root: Any, path: Sequence[str | int], *, key: bool = False) -> Position | None:
    """Position of the value at ``path`` (or of its key when ``key``); the nearest ancestor when absent."""
    node = root
    best: Position | None = (node.line, node.column) if isinstance(node, (YMap, YSeq)) else None
    for index, part in enumerate(path):
        last = index == len(path) - 1
        if isinstance(node, YMap) and isinstance(part, str) and part in node:
            best = node.key_pos[part] if (key and last) else node.value_pos[part]
            node = node[part]
        elif isinstance(node, YSeq) and isinstance(part, int) and 0 <= part < len(node):
            best = node.item_pos[part]
            node = node[part]
        else:
            break
    return best
