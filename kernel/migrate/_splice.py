"""Source text as the rewrite sees it: lines as libyaml counts them, composed nodes by path, and comments.

libyaml reports every node's start and end as (line, column) in characters, with ``\\r\\n``, ``\\r``, ``\\n``,
NEL, LS and PS as line breaks; :class:`Lines` splits text the same way so that those positions index it directly.
:class:`Tree` indexes the composed nodes of one policy mapping by path and answers which lines are inside multi-line
scalars (never comments) and where each line's last token ends (after it, a ``#`` starts a comment).
:func:`collect` reads the comments of a line range and attributes each to the node it documents.
"""

import bisect
import re
from typing import Any, ClassVar, NamedTuple

import yaml

from desched.tree import Path

__all__ = ["Comment", "Lines", "Path", "Tree", "collect", "compose_all", "content_end", "indentation"]

#: A node's place in a document or stream: mapping keys (as their scalar text) and sequence indexes.

_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#")

try:  # pragma: no cover - depends on how PyYAML was built
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


class _CachingLoader(_Loader):
    """libyaml's composer with PyYAML's implicit tag resolution memoised (policies repeat their scalars a lot)."""

    _tags: ClassVar[dict[tuple[str, Any], str]] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
            if len(self._tags) < 50_000 and len(value) < 200:
                self._tags[key] = tag
        return tag


def compose_all(text: str) -> list[Any]:
    """The composed node of every document (``None`` never appears: an empty document is a null scalar)."""
    return list(yaml.compose_all(text, Loader=_CachingLoader))


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class Lines:
    """``text`` split at YAML line breaks: ``lines[i]`` without its break, ``ends[i]`` the break (``""`` at EOF)."""

    __slots__ = ("ends", "lines", "newline", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: list[str] = []
        self.ends: list[str] = []
        start = 0
        for match in _BREAK.finditer(text):
            self.lines.append(text[start : match.start()])
            self.ends.append(match.group())
            start = match.end()
        if start < len(text):
            self.lines.append(text[start:])
            self.ends.append("")
        self.newline = "\r\n" if self.ends and self.ends[0] == "\r\n" else "\n"

    def __len__(self) -> int:
        return len(self.lines)

    def blank(self, index: int) -> bool:
        return not self.lines[index].strip()


class Comment(NamedTuple):
    """One comment: its 0-based ``line``, ``text`` (from ``#``), ``kind`` (head, eol, tail) and source ``path``."""

    line: int
    text: str
    kind: str
    path: Path


def content_end(node: Any, lines: Lines) -> tuple[int, int]:
    """0-based (line, column) just after the last character of ``node``'s content (trailing comments excluded)."""
    while isinstance(node, yaml.CollectionNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    end = node.end_mark
    start = node.start_mark
    if isinstance(node, yaml.ScalarNode) and end.line > start.line and end.column == 0:
        line = end.line - 1  # a block scalar's token takes its trailing line breaks
        while line > start.line and lines.blank(line):
            line -= 1
        return line, len(lines.lines[line])
    return end.line, end.column


class Tree:
    """The composed nodes under one root, by path (keys as their scalar text), with line facts for comments."""

    __slots__ = ("aliased", "anchor_lines", "anchors", "interior", "line_end", "nodes")

    def __init__(self, root: Any) -> None:
        self.nodes: dict[Path, tuple[Any, Any]] = {}
        self.anchors: list[tuple[int, int, Path]] = []
        self.line_end: dict[int, int] = {}
        self.interior: set[int] = set()
        self.aliased = False
        self._walk(root)
        self.anchors.sort(key=lambda anchor: (anchor[0], anchor[1]))
        self.anchor_lines = [anchor[0] for anchor in self.anchors]

    def _walk(self, root: Any) -> None:
        seen: set[int] = set()
        stack: list[tuple[Any, Path, Any]] = [(root, (), None)]
        while stack:
            node, path, key = stack.pop()
            self.nodes[path] = (key, node)
            if id(node) in seen:  # an alias: its marks are the anchor's
                self.aliased = True
                continue
            seen.add(id(node))
            where = key.start_mark if key is not None else node.start_mark
            if path:
                self.anchors.append((where.line, where.column, path))
            if key is not None:
                self._ends(key)
            if isinstance(node, yaml.ScalarNode):
                self._ends(node)
                start, end = node.start_mark, node.end_mark
                last = end.line - 1 if end.column == 0 else end.line
                self.interior.update(range(start.line + 1, last + 1))
            elif isinstance(node, yaml.CollectionNode):
                if node.flow_style:
                    self._ends(node)
                children: list[tuple[Any, Path, Any]] = []
                if isinstance(node, yaml.MappingNode):
                    for child_key, child in node.value:
                        if isinstance(child_key, yaml.ScalarNode):
                            children.append((child, (*path, child_key.value), child_key))
                else:
                    children.extend((child, (*path, index), None) for index, child in enumerate(node.value))
                stack.extend(reversed(children))

    def _ends(self, node: Any) -> None:
        end = node.end_mark
        if end.column == 0 and end.line > node.start_mark.line:
            return
        if self.line_end.get(end.line, -1) < end.column:
            self.line_end[end.line] = end.column

    def key_position(self, path: Path) -> tuple[int, int] | None:
        """0-based position of the key (or item) at ``path``, else of its nearest ancestor in the tree."""
        for stop in range(len(path), -1, -1):
            found = self.nodes.get(path[:stop])
            if found is not None:
                mark = (found[0] or found[1]).start_mark
                return mark.line, mark.column
        return None

    def is_comment(self, lines: Lines, index: int) -> bool:
        return index not in self.interior and lines.lines[index].lstrip(" \t").startswith("#")

    def eol_comment(self, lines: Lines, index: int) -> str | None:
        if index in self.interior and index not in self.line_end:
            return None
        line = lines.lines[index]
        match = _COMMENT.search(line, self.line_end.get(index, 0))
        return line[match.start() :].rstrip() if match else None

    def first_on(self, line: int) -> Path | None:
        at = bisect.bisect_left(self.anchor_lines, line)
        if at < len(self.anchors) and self.anchors[at][0] == line:
            return self.anchors[at][2]
        return None

    def next_after(self, line: int) -> tuple[int, int, Path] | None:
        at = bisect.bisect_right(self.anchor_lines, line)
        return self.anchors[at] if at < len(self.anchors) else None

    def previous(self, line: int, column: int) -> Path | None:
        """The last node starting before ``line`` left of ``column``: the block a comment in that column trails
        (a comment level with sibling keys after the last of them trails their parent)."""
        at = bisect.bisect_left(self.anchor_lines, line) - 1
        while at >= 0:
            if self.anchors[at][1] < column:
                return self.anchors[at][2]
            at -= 1
        return None


def collect(lines: Lines, tree: Tree, first: int, last: int, owner: Path) -> list[Comment]:
    """The comments on lines ``first``..``last``, each attributed to a source path.

    A full-line comment documents the next node when it is indented no deeper than that node (``head``); otherwise it
    trails the innermost block before it that starts left of it (``tail``). A comment after content documents the
    first node starting on its line (``eol``). ``owner`` takes what nothing else claims.
    """
    found: list[Comment] = []
    for index in range(first, last + 1):
        if index >= len(lines):
            break
        if tree.is_comment(lines, index):
            text = lines.lines[index].strip()
            column = indentation(lines.lines[index])
            following = tree.next_after(index)
            if following is not None and following[0] <= last and column <= following[1]:
                found.append(Comment(index, text, "head", following[2]))
            else:
                found.append(Comment(index, text, "tail", tree.previous(index, column) or owner))
            continue
        eol = tree.eol_comment(lines, index)
        if eol is not None:
            path = tree.first_on(index) or tree.previous(index, len(lines.lines[index])) or owner
            found.append(Comment(index, eol, "eol", path))
    return found
