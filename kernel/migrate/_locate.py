"""Finding what to rewrite in a YAML stream, and where it is written.

:func:`find_candidates` lists what the rewrite changes, in stream order, as the policy locator
(:func:`desched.gitops.documents.locate_policies`) finds it: v1alpha1 policies (raw documents, ``kind: List`` items,
Helm values) and every ConfigMap key or values string whose text may hold one (migrated as a stream of its own).
:class:`Source` is the stream's text as lines and composed nodes: it finds a node by path and gives the 1-based
position of a path for problems. :func:`regions` gives the line ranges of a block mapping's entries, with their
comments; :func:`note_line` and :func:`helm_note_line` the line a conversion note is reported on;
:func:`embedded_problem` places a problem found in a key's text in the file.

Problems that refuse the file are :class:`Refused` (with :class:`MigrationProblem` positions); :class:`Unsafe` says
that the precise rewrite cannot be trusted, so that the policy is written from data, or the file refused.
"""

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import yaml

from desched.deployment.releases import Deployments, Release
from desched.gitops.documents import (
    HELM_POLICY_KEY,
    HELM_VERSION_KEY,
    Location,
    Shape,
    is_misdeclared_v1alpha1,
    locate_policies,
    object_identity,
)
from desched.migrate._splice import Lines, Path, Tree, compose_all, content_end, indentation
from desched.migrate.convert import V1ALPHA1, is_v1alpha1
from desched.reading.yamlsrc import YamlError, YMap, load_all

__all__ = [
    "TEXT_SHAPES",
    "Candidate",
    "MigrationProblem",
    "Refused",
    "Region",
    "Source",
    "Unsafe",
    "block_header",
    "block_indent",
    "child",
    "embedded_problem",
    "find_candidates",
    "helm_note_line",
    "helm_source",
    "load",
    "note_line",
    "regions",
]

_KIND = "DeschedulerPolicy"
_BLOCK_HEADER = re.compile(r"([|>])([1-9]?)([+-]?)([1-9]?)")

#: The shapes whose candidate is YAML text in ``data[key]``, migrated as a stream of its own.
TEXT_SHAPES = (Shape.CONFIGMAP, Shape.VALUES_TEXT)


class MigrationProblem(NamedTuple):
    """Why a file cannot be migrated; 1-based position in the file."""

    message: str
    line: int
    column: int


class Refused(Exception):
    """The file cannot be migrated: it is left as it is and ``problems`` are reported."""

    def __init__(self, *problems: MigrationProblem) -> None:
        super().__init__(problems[0].message)
        self.problems = list(problems)


class Unsafe(Exception):
    """The precise rewrite cannot be trusted for this policy; write it from data."""


class Candidate(NamedTuple):
    """Something the rewrite changes: a policy, Helm values with one, or a key whose text may hold one."""

    shape: Shape  # POLICY, HELM, CONFIGMAP or VALUES_TEXT (the two last: YAML text in data[key], migrated alone)
    path: Path  # in the stream: document index, then keys and indexes
    data: Any
    key: str | None = None  # the key holding the text
    hint: str | None = None  # the chart version a wrapper pins
    wrapper: str = ""  # the wrapper that pins it
    release: Release | None = None  # the release deployed with the policy, when known

    @property
    def text(self) -> str:
        """The YAML text a ``configmap`` or ``values-text`` candidate holds."""
        assert self.key is not None
        text: str = self.data[self.key]
        return text


def load(text: str) -> list[Any]:
    """The documents of ``text`` as plain data with positions; invalid YAML refuses the file."""
    try:
        return load_all(text)
    except YamlError as exc:
        raise Refused(MigrationProblem(exc.message, exc.line, exc.column)) from None


def _migrates(policy: Mapping[str, Any]) -> bool:
    """Whether migrate rewrites ``policy``: v1alpha1, or v1alpha1 content declared v1alpha2 (read as v1alpha1)."""
    return is_v1alpha1(policy) or is_misdeclared_v1alpha1(policy)


def helm_source(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values' policy as the converter reads it: the chart's apiVersion and kind put in front."""
    policy = values[HELM_POLICY_KEY]
    version = values.get(HELM_VERSION_KEY)
    if version is None and "strategies" in policy and "profiles" not in policy:
        version = V1ALPHA1  # charts before v0.30 defaulted to v1alpha1
    source: dict[str, Any] = {"apiVersion": version, "kind": _KIND}
    source.update((key, value) for key, value in policy.items() if key not in ("apiVersion", "kind"))
    return source


def find_candidates(
    docs: list[Any], raw_only: bool, outer: Candidate | None, deployments: Deployments, name: str
) -> list[Candidate]:
    """The v1alpha1 policies the policy locator finds in the documents of a stream, and every ConfigMap key or values
    string meant to hold one. ``raw_only``: the stream is a ConfigMap key's text, ``outer`` its candidate (or that of
    a values string); ``deployments`` and ``name`` (the file) say which descheduler reads each policy."""
    hint, wrapper, release = (outer.hint, outer.wrapper, outer.release) if outer else (None, "", None)
    umbrella = None
    if outer is None and not raw_only:
        from desched.gitops.umbrella import dependency_beside  # a values file may be an umbrella chart's

        umbrella = dependency_beside(name)
    found: list[Candidate] = []
    for location in locate_policies(docs, raw_only=raw_only, umbrella=umbrella):
        node = location.node
        if location.unreached is not None:
            continue  # values the chart never receives: lint says so (DS009); there is nothing to run to migrate
        if location.shape == Shape.HELM and _migrates(helm_source(node)):
            found.append(_helm_candidate(location, hint, wrapper))
        elif location.shape in TEXT_SHAPES:
            found.extend(_text_candidates(location, deployments))
        elif location.shape == Shape.POLICY and _migrates(node):
            reader = release if raw_only else deployments.reader_of_file(name)
            found.append(Candidate(Shape.POLICY, location.path, node, release=reader))
    return found


def _helm_candidate(location: Location, hint: str | None, wrapper: str) -> Candidate:
    """Helm values, with the chart version and the wrapper that pins it: their own wrapper's, else those around the
    text that holds them (``hint`` and ``wrapper``)."""
    hint, wrapper = location.hint or hint, location.wrapper or wrapper
    return Candidate(Shape.HELM, location.path, location.node, hint=hint, wrapper=wrapper)


def _text_candidates(location: Location, deployments: Deployments) -> Iterator[Candidate]:
    """One candidate per key of a ConfigMap meant to hold a policy, or of a mapping holding the chart's values."""
    node = location.node
    for key in location.keys:
        if location.shape == Shape.CONFIGMAP:
            yield Candidate(
                Shape.CONFIGMAP,
                (*location.path, "data", key),
                node["data"],
                key,
                release=_reader(node, key, deployments),
            )
        else:
            yield Candidate(Shape.VALUES_TEXT, (*location.path, key), node, key, location.hint, location.wrapper)


def _reader(configmap: Any, key: str, deployments: Deployments) -> Release | None:
    """The release of the descheduler that reads key ``key`` of the ConfigMap ``configmap``."""
    identity = object_identity(configmap)
    return None if identity is None else deployments.reader(*identity, key)


def child(node: Any, part: str | int) -> tuple[Any, Any]:
    """(key node, value node) of ``part`` in a composed mapping or sequence; the last duplicate key wins."""
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        found: tuple[Any, Any] = (None, None)
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                found = (key, value)
        return found
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return None, node.value[part]
    return None, None


class Source:
    """A stream's text as :class:`Lines` and the composed node of each of its ``docs``."""

    __slots__ = ("lines", "nodes")

    def __init__(self, text: str, docs: list[Any]) -> None:
        self.lines = Lines(text)
        try:
            self.nodes = compose_all(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            raise Refused(MigrationProblem(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", *where)) from None
        if len(self.nodes) != len(docs):
            raise Refused(MigrationProblem("cannot match the YAML documents to their text", 1, 1))

    def document(self, path: Path) -> Any:
        """The composed document ``path`` starts in."""
        return self.nodes[int(path[0])]

    def node(self, path: Path) -> Any:
        node = self.document(path)
        for part in path[1:]:
            node = child(node, part)[1]
            if node is None:
                raise Unsafe(f"no node at {path}")
        return node

    def entry(self, path: Path) -> tuple[Any, Any]:
        """(key node, value node) of the mapping entry at ``path``."""
        key, value = child(self.node(path[:-1]), path[-1])
        if key is None or value is None:
            raise Unsafe(f"no entry at {path}")
        return key, value

    def position(self, path: Path) -> tuple[int, int]:
        """1-based position of the key at ``path`` in the stream, or of its nearest ancestor."""
        nodes = self.nodes
        node = nodes[int(path[0])] if path and isinstance(path[0], int) and path[0] < len(nodes) else None
        if node is None:
            return 1, 1
        mark = node.start_mark
        for part in path[1:]:
            key, found = child(node, part)
            if found is None:
                break
            mark = (key or found).start_mark
            node = found
        return mark.line + 1, mark.column + 1


def note_line(anchor: Any, tree: Tree, path: Path) -> int:
    """1-based line of a note on source ``path`` of the policy ``tree``: its key's (or nearest ancestor's) line, else
    the line of node ``anchor``."""
    position = tree.key_position(path)
    return position[0] + 1 if position else anchor.start_mark.line + 1


def helm_note_line(values: Any, tree: Tree, path: Path) -> int:
    """1-based line of a note on ``path`` of Helm values' policy: the chart's version key for ``apiVersion``, the
    policy key for ``kind`` and for the whole policy."""
    if path[:1] in (("apiVersion",), ("kind",)) or not path:
        key, _ = child(values, HELM_VERSION_KEY if path[:1] == ("apiVersion",) else HELM_POLICY_KEY)
        key = key or child(values, HELM_POLICY_KEY)[0]
        return int(key.start_mark.line) + 1
    return note_line(values, tree, path)


def block_header(line: str, column: int) -> tuple[str, int] | None:
    """The explicit indentation indicator (``""`` when none) of the block scalar header at ``column`` of ``line``,
    and the column after the header; ``None`` when no header stands there."""
    match = _BLOCK_HEADER.match(line, column)
    return (match.group(2) or match.group(4), match.end()) if match else None


def block_indent(lines: list[str], header_line: int, header_column: int) -> int | None:
    """Content indentation of the block scalar whose ``|`` or ``>`` stands at the 0-based position given."""
    if header_line >= len(lines):
        return None
    header = block_header(lines[header_line], header_column)
    explicit = header[0] if header else ""
    if explicit:
        return indentation(lines[header_line]) + int(explicit)
    for body in lines[header_line + 1 :]:
        if body.strip():
            return indentation(body)
    return None


def embedded_problem(text: str, candidate: Candidate, problem: MigrationProblem) -> MigrationProblem:
    """A problem at a position inside the text of ``candidate``, placed in the stream ``text``: inside a literal
    block it maps line for line, elsewhere it is the key's value."""
    assert candidate.key is not None
    data: YMap = candidate.data
    line, column = data.value_pos[candidate.key]
    style = data.styles.get(candidate.key, "")
    what = "ConfigMap key" if candidate.shape == Shape.CONFIGMAP else "key"
    message = f"{what} {candidate.key}: {problem.message}"
    if style == "|":
        indent = block_indent(Lines(text).lines, line - 1, column - 1)
        if indent is not None:
            return MigrationProblem(message, line + problem.line, indent + problem.column)
    return MigrationProblem(message, line, column)


class Region(NamedTuple):
    """One entry of a block mapping: key node, value node, the lines of its head comments, of itself, and the gap
    (blank lines and loose comments) before them."""

    key: Any
    value: Any
    gap: int  # first line of the gap before the entry
    head: int  # first line of the comments directly above the key (the key's line when none)
    line: int  # the key's line
    last: int  # last line of the value, with the comments that trail it more deeply indented


def regions(lines: Lines, tree: Tree, mapping: Any) -> list[Region]:
    """The entries of a block mapping whose keys are one-line scalars in one column, one key a line.

    A comment between two entries at the keys' indentation or less heads the next entry; one indented more trails
    the previous entry, as do the comments indented more after the last entry.
    """
    pairs = mapping.value
    if not isinstance(mapping, yaml.MappingNode) or mapping.flow_style or not pairs:
        raise Unsafe("not a block mapping")
    column = pairs[0][0].start_mark.column
    found: list[Region] = []
    previous_last = pairs[0][0].start_mark.line - 1
    for index, (key, value) in enumerate(pairs):
        line = _key_line(key, column, previous_last)
        if index + 1 < len(pairs):
            last = _last_before(lines, tree, line, pairs[index + 1][0].start_mark.line, column)
        else:
            last = _last_of_final(lines, tree, max(line, content_end(value, lines)[0]), column)
        head = _head(lines, tree, line, previous_last, column) if index > 0 else line
        found.append(Region(key, value, previous_last + 1, head, line, last))
        previous_last = last
    return found


def _key_line(key: Any, column: int, previous_last: int) -> int:
    """The line of an entry's key: a scalar in the mapping's ``column``, below the previous entry's last line."""
    if not isinstance(key, yaml.ScalarNode) or key.start_mark.column != column:
        raise Unsafe("unusual mapping key")
    line: int = key.start_mark.line
    if line <= previous_last:
        raise Unsafe("two keys on one line")
    return line


def _last_before(lines: Lines, tree: Tree, line: int, next_key: int, column: int) -> int:
    """The last line of the entry on ``line`` whose next sibling's key is on ``next_key``: the blank lines and the
    comments at the keys' indentation or less before that key are not its own."""
    last = next_key - 1
    while last > line and (lines.blank(last) or (tree.is_comment(lines, last) and _shallow(lines, last, column))):
        last -= 1
    return last


def _last_of_final(lines: Lines, tree: Tree, last: int, column: int) -> int:
    """The last line of the final entry, whose value ends on ``last``: also the comments indented more than its key
    that follow (blank lines between them)."""
    for probe in range(last + 1, len(lines)):
        if lines.blank(probe):
            continue
        if not tree.is_comment(lines, probe) or _shallow(lines, probe, column):
            break
        last = probe
    return last


def _head(lines: Lines, tree: Tree, line: int, previous_last: int, column: int) -> int:
    """The first line of the comments at the keys' indentation or less directly above the key on ``line``."""
    head = line
    while head - 1 > previous_last and tree.is_comment(lines, head - 1) and _shallow(lines, head - 1, column):
        head -= 1
    return head


def _shallow(lines: Lines, index: int, column: int) -> bool:
    return indentation(lines.lines[index]) <= column
