"""Rewrite a file so that every ``descheduler/v1alpha1`` policy in it becomes ``descheduler/v1alpha2``, and nothing else
changes.

Policies are found by the policy locator (:func:`desched.documents.locate_policies`), as lint finds them: raw
documents (also ``kind: List`` items), any ConfigMap ``data`` key holding a policy, and Helm values
(``deschedulerPolicy`` + ``deschedulerPolicyAPIVersion``).
Each is converted by :func:`desched.migrate.convert.convert` (strict: what upstream refuses is an error and the file is
left as it is).

The rewrite is textual: libyaml's node positions say which lines hold the policy, and only those lines are replaced.
Every other byte of the file (other documents, the ConfigMap around an embedded policy, other chart values, and
the policy's own ``apiVersion``, ``kind``, ``nodeSelector`` and limits) is kept as written, with its comments and
quoting. The new ``profiles`` are written in the file's own indentation; a value carried over unchanged
(``namespaces``, ``thresholds``, ...) is copied from the source text, so it keeps its flow or block style, quoting
and comments. Comments on a strategy move to the profile made from it (or to the plugin entry, when profiles are
merged); a comment on an evict flag moves to the DefaultEvictor argument made from it. Every conversion note is
written as a ``# desched migrate: ...`` comment next to what it concerns and returned with its line for stderr.
An embedded policy is rewritten in its own text and put back in the same block scalar style and indentation.

Before a result is returned the new text is parsed again and must hold exactly the expected data: the converted
policies where the old ones were, everything else equal. If copying source text breaks that, the policy is written
from data instead; if that fails too, the file is reported as an error and left unchanged. A file with no
v1alpha1 policy is returned unchanged, byte for byte, without being re-serialised.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import yaml

from desched import versions
from desched.documents import (
    HELM_POLICY_KEY,
    HELM_VERSION_KEY,
    is_misdeclared_v1alpha1,
    locate_policies,
    object_identity,
)
from desched.migrate._emit import (
    Comments,
    Copy,
    Emitter,
    Path,
    Style,
    detect_style,
    double_quoted,
    indentation,
    restyle,
)
from desched.migrate._splice import Comment, Lines, Tree, collect, compose_all, content_end
from desched.migrate._verify import matches
from desched.migrate.convert import (
    V1ALPHA1,
    V1ALPHA2,
    ConversionError,
    Note,
    convert,
    is_v1alpha1,
)
from desched.releases import Deployments, Release, chart_release, configured
from desched.yamlsrc import YamlError, YMap, load_all

__all__ = ["COMMENT_PREFIX", "MigrationProblem", "Result", "migrate_text"]

#: How the notes written into a migrated file begin.
COMMENT_PREFIX = "# desched migrate: "

_KIND = "DeschedulerPolicy"
_BLOCK_HEADER = re.compile(r"([|>])([1-9]?)([+-]?)([1-9]?)")
_NODE_FOR: dict[type, type[yaml.Node]] = {dict: yaml.MappingNode, list: yaml.SequenceNode}
_UNSEEN_VALUE = -1
_UNSEEN = Style(_UNSEEN_VALUE, _UNSEEN_VALUE, _UNSEEN_VALUE)


class MigrationProblem(NamedTuple):
    """Why a file cannot be migrated; 1-based position in the file."""

    message: str
    line: int
    column: int


class Result(NamedTuple):
    """``text`` is the migrated text (the input itself when nothing changed or on errors); ``notes`` pair each
    conversion note with its 1-based line in the input; ``errors`` is non-empty when the file was refused."""

    text: str
    changed: bool
    notes: list[tuple[Note, int]]
    errors: list[MigrationProblem]


class _Options(NamedTuple):
    target: int | None
    upstream_compatible: bool
    merge_profiles: bool
    chart_version: str | None
    name: str
    deployments: Deployments


class _Refused(Exception):
    def __init__(self, *problems: MigrationProblem) -> None:
        super().__init__(problems[0].message)
        self.problems = list(problems)


class _Unsafe(Exception):
    """The precise rewrite cannot be trusted for this policy; write it from data."""


def migrate_text(
    name: str,
    text: str,
    *,
    target: int | None = None,
    upstream_compatible: bool = False,
    merge_profiles: bool = False,
    chart_version: str | None = None,
    deployments: Deployments | None = None,
) -> Result:
    """Migrate every v1alpha1 policy in ``text`` (the contents of file ``name``).

    ``target`` is the descheduler release (minor number) the output is for. ``None`` takes, per policy, the release
    deployed with it (:mod:`desched.releases`: the descheduler in ``text`` or in ``deployments`` that reads it; for
    Helm values their ``image.tag``, the chart version a GitOps wrapper pins, or ``chart_version``, a
    ``Chart.yaml`` ``appVersion`` the caller found); else output every release from v0.31 to v0.36 accepts
    (:data:`PORTABLE`). A note says which release each policy was written for.
    Never raises for bad input: what cannot be migrated comes back in ``errors``, with the text unchanged. Text
    that mentions neither ``v1alpha1`` nor ``strategies`` is returned at once, unparsed: it cannot hold a v1alpha1
    policy, and need not be YAML (a Helm template is not).
    """
    if "v1alpha1" not in text and "strategies" not in text:
        return Result(text, False, [], [])  # cannot hold a v1alpha1 policy; need not even be YAML (Helm templates)
    options = _Options(target, upstream_compatible, merge_profiles, chart_version, name, deployments or Deployments())
    try:
        new, notes = _Stream(text, options, inner=False).migrate()
    except _Refused as exc:
        return Result(text, False, [], sorted(exc.problems, key=lambda problem: (problem.line, problem.column)))
    return Result(new, new != text, notes, [])


def _same(left: Any, right: Any) -> bool:
    """Equal as YAML data: mappings by key set, ``True`` is not ``1``, NaN equals NaN."""
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and len(left) == len(right)
            and all(key in right and _same(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list):
        return isinstance(right, list) and len(left) == len(right) and all(map(_same, left, right))
    if type(left) is not type(right):
        return False
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


def _lookup(data: Any, path: Path) -> tuple[bool, Any]:
    for part in path:
        found = (isinstance(data, dict) and isinstance(part, str) and part in data) or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        )
        if not found:
            return False, None
        data = data[part]
    return True, data


def _child(node: Any, part: str | int) -> tuple[Any, Any]:
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


#: What migrate writes when nothing names the release that runs a policy: output every release from v0.31 (the first
#: without v1alpha1) to the newest accepts, so DefaultEvictor keeps its booleans rather than v0.34's podProtections.
PORTABLE = Release(
    versions.V1ALPHA1_REMOVED,
    f"{versions.render(versions.V1ALPHA1_REMOVED)}-{versions.render(versions.NEWEST)}",
    "no release is deployed with this policy, so the output is what every release from "
    f"{versions.render(versions.V1ALPHA1_REMOVED)} to {versions.render(versions.NEWEST)} accepts "
    "(DefaultEvictor's booleans, not podProtections); --target-version writes for one release",
)


def _migrates(policy: Mapping[str, Any]) -> bool:
    """Whether migrate rewrites ``policy``: v1alpha1, or v1alpha1 content declared v1alpha2 (read as v1alpha1)."""
    return is_v1alpha1(policy) or is_misdeclared_v1alpha1(policy)


def _as_declared(policy: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the converter reads: misdeclared v1alpha1 content as the v1alpha1 it is."""
    return {**policy, "apiVersion": V1ALPHA1} if is_misdeclared_v1alpha1(policy) else policy


def _written_for(release: Release) -> Note:
    return Note("info", f"written for descheduler {release.version}: {release.reason}", ())


def _helm_source(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values' policy as the converter reads it: the chart's apiVersion and kind put in front."""
    policy = values[HELM_POLICY_KEY]
    version = values.get(HELM_VERSION_KEY)
    if version is None and "strategies" in policy and "profiles" not in policy:
        version = V1ALPHA1  # charts before v0.30 defaulted to v1alpha1
    source: dict[str, Any] = {"apiVersion": version, "kind": _KIND}
    source.update((key, value) for key, value in policy.items() if key not in ("apiVersion", "kind"))
    return source


class _Edit(NamedTuple):
    """Replace lines ``first``..``stop - 1`` (0-based) with ``lines`` (``first == stop`` inserts)."""

    first: int
    stop: int
    lines: list[str]


def _apply(lines: Lines, edits: list[_Edit]) -> str:
    out: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda edit: (edit.first, edit.stop)):
        if edit.first < position:
            raise _Unsafe("overlapping edits")
        out.extend(lines.lines[index] + lines.ends[index] for index in range(position, edit.first))
        if edit.lines:
            if out and not out[-1].endswith(("\n", "\r", "\x85", "\u2028", "\u2029")):
                out[-1] += lines.newline
            last = lines.ends[edit.stop - 1] if edit.stop > edit.first else lines.newline
            out.extend(line + lines.newline for line in edit.lines[:-1])
            out.append(edit.lines[-1] + last)
        position = max(position, edit.stop)
    out.extend(lines.lines[index] + lines.ends[index] for index in range(position, len(lines)))
    return "".join(out)


class _Candidate(NamedTuple):
    shape: str  # policy, helm, configmap or values-text (the two last: YAML text in data[key], migrated on its own)
    path: Path  # in the stream: document index, then keys and indexes
    data: Any
    key: str | None = None  # the key holding the text
    hint: str | None = None  # the chart version a wrapper pins
    wrapper: str = ""  # the wrapper that pins it
    release: Release | None = None  # the release deployed with the policy, when known


_TEXT_SHAPES = ("configmap", "values-text")


class _Stream:
    """One YAML stream: a file, or the text of a ConfigMap key (``inner``: raw policies only)."""

    def __init__(self, text: str, options: _Options, inner: bool, outer: _Candidate | None = None) -> None:
        self.text = text
        self.options = options
        self.inner = inner
        # of the text of a ConfigMap key or a values string: the chart version and wrapper around it, and the
        # release of the descheduler that reads the key
        self.hint, self.wrapper = (outer.hint, outer.wrapper) if outer else (None, "")
        self.release = outer.release if outer else None

    def migrate(self) -> tuple[str, list[tuple[Note, int]]]:
        try:
            docs = load_all(self.text)
        except YamlError as exc:
            raise _Refused(MigrationProblem(exc.message, exc.line, exc.column)) from None
        if not self.inner:
            self.options = self.options._replace(
                deployments=self.options.deployments.extended((self.options.name, doc) for doc in docs)
            )
        candidates = self._candidates(docs)
        if not candidates:
            return self.text, []
        inner_results: dict[Path, tuple[str, list[tuple[Note, int]]]] = {}
        problems: list[MigrationProblem] = []
        for candidate in candidates:
            if candidate.shape in _TEXT_SHAPES:
                try:
                    inner_results[candidate.path] = self._inner(candidate)
                except _Refused as exc:
                    problems.extend(exc.problems)
        if problems:
            raise _Refused(*problems)
        candidates = [
            candidate
            for candidate in candidates
            if candidate.shape not in _TEXT_SHAPES or inner_results[candidate.path][0] != candidate.data[candidate.key]
        ]
        if not candidates:
            return self.text, []
        lines = Lines(self.text)
        try:
            nodes = compose_all(self.text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            raise _Refused(MigrationProblem(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", *where)) from None
        if len(nodes) != len(docs):
            raise _Refused(MigrationProblem("cannot match the YAML documents to their text", 1, 1))
        for careful in (True, False):
            edits: list[_Edit] = []
            notes: list[tuple[Note, int]] = []
            subs: dict[Path, Any] = {}
            try:
                for candidate in candidates:
                    try:
                        self._rewrite(candidate, nodes, lines, careful, edits, notes, subs, inner_results)
                    except _Refused as exc:
                        problems.extend(exc.problems)
                if problems:
                    raise _Refused(*problems)
                new = _apply(lines, edits)
                if self._verified(new, nodes, subs):
                    notes.sort(key=lambda item: item[1])
                    return new, notes
            except _Unsafe:
                pass
        first = candidates[0]
        line, column = self._position(nodes, first.path)
        raise _Refused(MigrationProblem("cannot rewrite this file without changing more than the policy", line, column))

    # --- finding ----------------------------------------------------------------------------------------------------

    def _candidates(self, docs: list[Any]) -> list[_Candidate]:
        """The v1alpha1 policies the policy locator finds in the stream (and every ConfigMap key meant to hold one:
        its text is migrated as a stream of its own)."""
        found: list[_Candidate] = []
        for location in locate_policies(docs, raw_only=self.inner):
            node = location.node
            if location.shape == "helm" and _migrates(_helm_source(node)):
                hint, wrapper = location.hint or self.hint, location.wrapper or self.wrapper
                found.append(_Candidate("helm", location.path, node, hint=hint, wrapper=wrapper))
            elif location.shape == "configmap":
                found.extend(
                    _Candidate(
                        "configmap", (*location.path, "data", key), node["data"], key, release=self._reader(node, key)
                    )
                    for key in location.keys
                )
            elif location.shape == "values-text":
                found.extend(
                    _Candidate("values-text", (*location.path, key), node, key, location.hint, location.wrapper)
                    for key in location.keys
                )
            elif location.shape == "policy" and _migrates(node):
                release = self.release if self.inner else self.options.deployments.reader_of_file(self.options.name)
                found.append(_Candidate("policy", location.path, node, release=release))
        return found

    def _reader(self, configmap: Any, key: str) -> Release | None:
        """The release of the descheduler that reads key ``key`` of the ConfigMap ``configmap``."""
        identity = object_identity(configmap)
        return None if identity is None else self.options.deployments.reader(*identity, key)

    def _release(self, candidate: _Candidate) -> Release:
        """The release the output of ``candidate`` is written for (see :func:`migrate_text`)."""
        if self.options.target is not None:
            return configured(self.options.target, "--target-version")
        found = candidate.release
        if found is None and candidate.shape == "helm":
            image = candidate.data.get("image")
            tag = image.get("tag") if isinstance(image, dict) else None
            found = chart_release(tag, candidate.hint, candidate.wrapper, self.options.chart_version)
        return found if found is not None else PORTABLE

    def _inner(self, candidate: _Candidate) -> tuple[str, list[tuple[Note, int]]]:
        assert candidate.key is not None
        text = candidate.data[candidate.key]
        try:
            return _Stream(text, self.options, candidate.shape == "configmap", candidate).migrate()
        except _Refused as exc:
            raise _Refused(*(self._outer_problem(candidate, problem) for problem in exc.problems)) from None

    def _outer_problem(self, candidate: _Candidate, problem: MigrationProblem) -> MigrationProblem:
        """A position inside a ConfigMap key, in the file: inside a literal block it maps line for line."""
        assert candidate.key is not None
        data: YMap = candidate.data
        line, column = data.value_pos[candidate.key]
        style = data.styles.get(candidate.key, "")
        what = "ConfigMap key" if candidate.shape == "configmap" else "key"
        message = f"{what} {candidate.key}: {problem.message}"
        if style == "|":
            indent = _block_indent(Lines(self.text).lines, line - 1, column - 1)
            if indent is not None:
                return MigrationProblem(message, line + problem.line, indent + problem.column)
        return MigrationProblem(message, line, column)

    # --- rewriting --------------------------------------------------------------------------------------------------

    def _rewrite(
        self,
        candidate: _Candidate,
        nodes: list[Any],
        lines: Lines,
        careful: bool,
        edits: list[_Edit],
        notes: list[tuple[Note, int]],
        subs: dict[Path, Any],
        inner_results: dict[Path, tuple[str, list[tuple[Note, int]]]],
    ) -> None:
        node = self._node(nodes, candidate.path)
        document = nodes[int(candidate.path[0])]
        if candidate.shape in _TEXT_SHAPES:
            assert candidate.key is not None
            new, inner_notes = inner_results[candidate.path]
            key_node, value_node = self._key_value(nodes, candidate.path)
            style = detect_style([document], lines.lines)
            edits.append(_scalar_edit(lines, key_node, value_node, candidate.data[candidate.key], new, style))
            subs[candidate.path] = new
            # inside a literal block, line n of the policy is n lines below the header; elsewhere, the key's line
            header = value_node.start_mark.line + 1
            for note, line in inner_notes:
                notes.append((note, header + line if value_node.style == "|" else key_node.start_mark.line + 1))
            return
        if candidate.shape == "helm":
            values = candidate.data
            source = _helm_source(values)
            release = self._release(candidate)
            conversion = self._convert(_as_declared(source), release.target, nodes, candidate)
            out = {key: value for key, value in conversion.policy.items() if key not in ("apiVersion", "kind")}
            _, policy_node = _child(node, HELM_POLICY_KEY)
            tree = Tree(policy_node)
            own = self._style(policy_node, document, lines)
            rewrite = _PolicyRewrite(lines, tree, policy_node, values[HELM_POLICY_KEY], out, conversion.origins, own)
            edits.extend(rewrite.edits(conversion.notes, careful))
            edits.append(self._helm_version(lines, node))
            subs[(*candidate.path, HELM_POLICY_KEY)] = out
            subs[(*candidate.path, HELM_VERSION_KEY)] = V1ALPHA2
            notes.append((_written_for(release), node.start_mark.line + 1))
            for note in conversion.notes:
                notes.append((note, self._helm_line(node, tree, note.path)))
            return
        release = self._release(candidate)
        conversion = self._convert(_as_declared(candidate.data), release.target, nodes, candidate)
        tree = Tree(node)
        own = self._style(node, document, lines)
        rewrite = _PolicyRewrite(lines, tree, node, candidate.data, conversion.policy, conversion.origins, own)
        edits.extend(rewrite.edits(conversion.notes, careful))
        subs[candidate.path] = conversion.policy
        notes.append((_written_for(release), node.start_mark.line + 1))
        for note in conversion.notes:
            position = tree.key_position(note.path)
            notes.append((note, position[0] + 1 if position else node.start_mark.line + 1))

    def _style(self, policy: Any, document: Any, lines: Lines) -> Style:
        """The policy's own indentation; what it does not show, from its document (not from other documents)."""
        own = detect_style([policy], lines.lines, _UNSEEN)
        if _UNSEEN_VALUE not in own:
            return own
        around = detect_style([document], lines.lines)
        return Style(*(mine if mine != _UNSEEN_VALUE else theirs for mine, theirs in zip(own, around, strict=True)))

    def _convert(self, source: Mapping[str, Any], target: int, nodes: list[Any], candidate: _Candidate) -> Any:
        try:
            return convert(
                source,
                upstream_compatible=self.options.upstream_compatible,
                target=target,
                merge_profiles=self.options.merge_profiles,
                strict=True,
            )
        except ConversionError as exc:
            path = tuple(exc.path)
            if candidate.shape == "helm":
                if path[:1] == ("apiVersion",):
                    full: Path = (*candidate.path, HELM_VERSION_KEY)
                elif path[:1] == ("kind",):
                    full = (*candidate.path, HELM_POLICY_KEY)
                else:
                    full = (*candidate.path, HELM_POLICY_KEY, *path)
            else:
                full = (*candidate.path, *path)
            line, column = self._position(nodes, full)
            raise _Refused(MigrationProblem(exc.message, line, column)) from None

    def _node(self, nodes: list[Any], path: Path) -> Any:
        node = nodes[int(path[0])]
        for part in path[1:]:
            node = _child(node, part)[1]
            if node is None:
                raise _Unsafe(f"no node at {path}")
        return node

    def _key_value(self, nodes: list[Any], path: Path) -> tuple[Any, Any]:
        parent = self._node(nodes, path[:-1])
        key, value = _child(parent, path[-1])
        if key is None or value is None:
            raise _Unsafe(f"no entry at {path}")
        return key, value

    def _position(self, nodes: list[Any], path: Path) -> tuple[int, int]:
        """1-based position of the key at ``path`` in the stream, or of its nearest ancestor."""
        node = nodes[int(path[0])] if path and isinstance(path[0], int) and path[0] < len(nodes) else None
        if node is None:
            return 1, 1
        mark = node.start_mark
        for part in path[1:]:
            key, child = _child(node, part)
            if child is None:
                break
            mark = (key or child).start_mark
            node = child
        return mark.line + 1, mark.column + 1

    def _helm_line(self, values: Any, tree: Tree, path: Path) -> int:
        if path[:1] in (("apiVersion",), ("kind",)) or not path:
            key, _ = _child(values, HELM_VERSION_KEY if path[:1] == ("apiVersion",) else HELM_POLICY_KEY)
            key = key or _child(values, HELM_POLICY_KEY)[0]
            return int(key.start_mark.line) + 1
        position = tree.key_position(path)
        return position[0] + 1 if position else values.start_mark.line + 1

    def _helm_version(self, lines: Lines, values: Any) -> _Edit:
        """Set ``deschedulerPolicyAPIVersion`` (same quoting), or add it right after ``deschedulerPolicy``."""
        _, value = _child(values, HELM_VERSION_KEY)
        if value is not None and isinstance(value, yaml.ScalarNode) and value.start_mark.line == value.end_mark.line:
            line = value.start_mark.line
            text = lines.lines[line]
            written = restyle(value.style, V1ALPHA2)
            return _Edit(line, line + 1, [text[: value.start_mark.column] + written + text[value.end_mark.column :]])
        if value is not None:
            raise _Unsafe("deschedulerPolicyAPIVersion is not a one-line scalar")
        policy_key, _ = _child(values, HELM_POLICY_KEY)
        regions = _regions(lines, Tree(values), values)
        region = next(region for region in regions if region.key == policy_key)
        pad = lines.lines[policy_key.start_mark.line][: policy_key.start_mark.column]
        pad = " " * len(pad)
        return _Edit(region.last + 1, region.last + 1, [f"{pad}{HELM_VERSION_KEY}: {V1ALPHA2}"])

    def _verified(self, new: str, nodes: list[Any], subs: dict[Path, Any]) -> bool:
        try:
            again = compose_all(new)
        except yaml.YAMLError:
            return False
        return matches(again, nodes, subs)


def _block_indent(lines: list[str], header_line: int, header_column: int) -> int | None:
    """Content indentation of the block scalar whose ``|`` or ``>`` stands at the 0-based position given."""
    if header_line >= len(lines):
        return None
    match = _BLOCK_HEADER.match(lines[header_line], header_column)
    explicit = (match.group(2) or match.group(4)) if match else ""
    if explicit:
        return indentation(lines[header_line]) + int(explicit)
    for body in lines[header_line + 1 :]:
        if body.strip():
            return indentation(body)
    return None


def _scalar_edit(lines: Lines, key: Any, value: Any, old: str, new: str, style: Style) -> _Edit:
    """Put ``new`` (the migrated text of a ConfigMap key) where ``old`` was, in the same scalar style."""
    start, end = value.start_mark, value.end_mark
    first = lines.lines[start.line]
    if value.style in ("|", ">"):
        indent = _block_indent(lines.lines, start.line, start.column)
        if indent is None:
            raise _Unsafe("empty block scalar")
        count = len((old[:-1] if old.endswith("\n") else old).split("\n"))
        body = (new[:-1] if new.endswith("\n") else new).split("\n")
        written = [" " * indent + line if line else "" for line in body]
        if value.style == "|":
            return _Edit(start.line + 1, start.line + 1 + count, written)
        match = _BLOCK_HEADER.match(first, start.column)
        assert match is not None
        header = first[: start.column] + "|" + _chomping(new) + (match.group(2) or match.group(4))
        header += first[match.end() :]
        last = content_end(value, lines)[0]
        return _Edit(start.line, last + 1, [header, *written])
    if value.style == '"' or "\n" not in new.rstrip("\n"):
        written_scalar = double_quoted(new) if value.style == '"' or "\n" in new else restyle(value.style, new)
        tail = lines.lines[end.line][end.column :]
        return _Edit(start.line, end.line + 1, [first[: start.column] + written_scalar + tail])
    indent = key.start_mark.column + style.mapping
    body = (new[:-1] if new.endswith("\n") else new).split("\n")
    header = first[: start.column] + "|" + _chomping(new) + lines.lines[end.line][end.column :]
    return _Edit(start.line, end.line + 1, [header, *(" " * indent + line if line else "" for line in body)])


def _chomping(text: str) -> str:
    if not text.endswith("\n"):
        return "-"
    return "+" if text.endswith("\n\n") else ""


class _Region(NamedTuple):
    """One entry of a block mapping: key node, value node, the lines of its head comments, of itself, and the gap
    (blank lines and loose comments) before them."""

    key: Any
    value: Any
    gap: int  # first line of the gap before the entry
    head: int  # first line of the comments directly above the key (the key's line when none)
    line: int  # the key's line
    last: int  # last line of the value, with the comments that trail it more deeply indented


def _regions(lines: Lines, tree: Tree, mapping: Any) -> list[_Region]:
    pairs = mapping.value
    if not isinstance(mapping, yaml.MappingNode) or mapping.flow_style or not pairs:
        raise _Unsafe("not a block mapping")
    column = pairs[0][0].start_mark.column
    regions: list[_Region] = []
    previous_last = pairs[0][0].start_mark.line - 1
    for index, (key, value) in enumerate(pairs):
        if not isinstance(key, yaml.ScalarNode) or key.start_mark.column != column:
            raise _Unsafe("unusual mapping key")
        line = key.start_mark.line
        if line <= previous_last:
            raise _Unsafe("two keys on one line")
        if index + 1 < len(pairs):
            last = pairs[index + 1][0].start_mark.line - 1
            while last > line and (
                lines.blank(last) or (tree.is_comment(lines, last) and _shallow(lines, last, column))
            ):
                last -= 1
        else:
            last = max(line, content_end(value, lines)[0])
            probe = last + 1
            while probe < len(lines):
                if lines.blank(probe):
                    probe += 1
                    continue
                if tree.is_comment(lines, probe) and not _shallow(lines, probe, column):
                    last = probe
                    probe += 1
                    continue
                break
        head = line
        if index > 0:
            while head - 1 > previous_last and tree.is_comment(lines, head - 1) and _shallow(lines, head - 1, column):
                head -= 1
        regions.append(_Region(key, value, previous_last + 1, head, line, last))
        previous_last = last
    return regions


def _shallow(lines: Lines, index: int, column: int) -> bool:
    return indentation(lines.lines[index]) <= column


class _PolicyRewrite:
    """The new lines of one policy mapping.

    Each top-level entry of the source is *kept* (same key, same value: its lines are copied), *replaced* in place
    (a one-line scalar such as ``apiVersion``, same quoting) or *removed*. Output keys not kept are written where the
    source entry they come from stood (``profiles`` where ``strategies`` was), else after the key before them. The
    comments of removed entries go to the output node made from what they document (:meth:`_home`); notes go there
    too, as ``# desched migrate:`` lines. A comment or note with no such node stays where its entry was, or goes
    above the first written key.
    """

    def __init__(
        self,
        lines: Lines,
        tree: Tree,
        node: Any,
        data: Mapping[str, Any],
        out: dict[str, Any],
        origins: dict[Path, Path],
        style: Style,
    ) -> None:
        self.lines = lines
        self.tree = tree
        self.node = node
        self.data = data
        self.out = out
        self.origins = origins
        self.style = style
        self.kept: dict[str, str | None] = {}  # key -> its new line when a scalar is replaced in place
        self.placed: dict[str | None, list[str]] = {}  # source entry (None: before all) -> keys written there
        self.copies: dict[Path, Copy] = {}
        self.consumed: set[int] = set()  # source lines that travel inside copies, with their comments
        self.targets: dict[Path, list[Path]] = {}
        self.destinations: dict[Path, Path | None] = {}
        self.comments: dict[Path, Comments] = {}
        self.heads: dict[Path, list[tuple[int, int, str]]] = {}
        self.in_place: dict[str, list[str]] = {}  # comments and notes left where a removed entry stood
        self.before: dict[str, list[str]] = {}  # notes about a kept entry, written above it
        self.loose: list[str] = []

    def edits(self, notes: list[Note], careful: bool) -> list[_Edit]:
        if not isinstance(self.node, yaml.MappingNode) or self.node.flow_style or not self.node.value:
            return [self._flow()]
        regions = _regions(self.lines, self.tree, self.node)
        by_key = {region.key.value: region for region in regions}
        if len(by_key) != len(regions):
            raise _Unsafe("duplicate keys")
        self._decide(by_key)
        emitted = [key for keys in self.placed.values() for key in keys]
        if careful:
            for key in emitted:
                self._plan(self.out[key], (key,))
        for out_path, src in self.origins.items():
            if src and out_path and out_path[0] in emitted:
                self.targets.setdefault(src, []).append(out_path)
        for anchor, keys in self.placed.items():  # a removed entry's own comments go to what replaces it
            if anchor is not None and anchor not in self.kept and (anchor,) not in self.targets:
                self.destinations[(anchor,)] = (keys[0],)
        for region in regions:
            if region.key.value not in self.kept:
                for comment in collect(self.lines, self.tree, region.head, region.last, (region.key.value,)):
                    if comment.line not in self.consumed:
                        self._place(comment)
        for number, note in enumerate(notes):
            text = COMMENT_PREFIX + " ".join(note.message.split())
            found, _ = self._home(tuple(note.path))
            if found is not None:
                self.heads.setdefault(found, []).append((1, number, text))
            else:
                self._sink(tuple(note.path), text, (1, number))
        for path, entries in self.heads.items():
            self.comments.setdefault(path, Comments()).head.extend(text for _, _, text in sorted(entries))
        if self.loose and emitted:
            self.comments.setdefault((emitted[0],), Comments()).head[:0] = self.loose
            self.loose = []
        return [_Edit(regions[0].line, regions[-1].last + 1, self._body(regions))]

    def _decide(self, by_key: dict[str, _Region]) -> None:
        """Which source entries are kept, and where each other output key is written."""
        previous: str | None = None
        for key, value in self.out.items():
            origin = self.origins.get((key,))
            source = str(origin[0]) if origin and len(origin) == 1 and str(origin[0]) in by_key else None
            if source is None and key in by_key:
                source = key
            if source == key:
                if key in self.data and _same(value, self.data[key]):
                    self.kept[key] = None
                    previous = key
                    continue
                written = self._scalar_in_place(by_key[key], value)
                if written is not None:
                    self.kept[key] = written
                    previous = key
                    continue
            anchor = source if source is not None else previous
            self.placed.setdefault(anchor, []).append(key)
            previous = anchor

    def _body(self, regions: list[_Region]) -> list[str]:
        column = regions[0].key.start_mark.column
        pad = " " * column
        emitter = Emitter(self.style, self.comments, self.copies)
        body: list[str] = [pad + text for text in self.loose]

        def emit(keys: list[str]) -> None:
            for key in keys:
                emitter.entry(key, self.out[key], (key,), column, body)

        emit(self.placed.get(None, []))
        first_line_at: int | None = None
        for region in regions:
            key = region.key.value
            gap = self.lines.lines[region.gap : region.head]
            if key in self.kept:
                body.extend(gap)
                body.extend(pad + text for text in self.before.get(key, []))
                chunk = self.lines.lines[region.head : region.last + 1]
                written = self.kept[key]
                if written is not None:
                    chunk = [*chunk]
                    chunk[region.line - region.head] = written
                if region is regions[0]:
                    first_line_at = len(body) + region.line - region.head
                body.extend(chunk)
            else:
                own = self.in_place.get(key, [])
                if own or self.placed.get(key) or any(line.strip() for line in gap):
                    body.extend(gap)  # a removed entry that leaves nothing behind takes its blank lines along
                body.extend(pad + text for text in own)
            emit(self.placed.get(key, []))

        prefix = self.lines.lines[regions[0].line][:column]
        if prefix.strip():  # the mapping is a sequence item: the dash goes on its new first line
            if first_line_at is not None:
                body[first_line_at] = pad + body[first_line_at][column:]
            for index, line in enumerate(body):
                if line.strip() and not line.lstrip().startswith("#"):
                    body[index] = prefix + line[column:]
                    break
        return body

    def _destination(self, src: Path) -> Path | None:
        """The output node made from ``src`` that holds most of what came from inside it (the first such in writing
        order): a strategy's profile rather than its name, a params block's plugin args rather than a threshold."""
        if src not in self.destinations:
            found = self.targets.get(src)
            if not found or len(found) == 1:
                self.destinations[src] = found[0] if found else None
            else:
                inside = [out for out, origin in self.origins.items() if origin[: len(src)] == src]
                self.destinations[src] = min(
                    found, key=lambda path: (-sum(out[: len(path)] == path for out in inside), self._rank(path))
                )
        return self.destinations[src]

    def _home(self, path: Path) -> tuple[Path | None, bool]:
        """Where a comment on source ``path`` goes, and whether that is ``path``'s own node (not an ancestor's).

        A destination inside copied source text is lifted to the copy (the copy's own comments travel inside it).
        """
        for stop in range(len(path), 0, -1):
            found = self._destination(path[:stop])
            if found is not None:
                for lift in range(1, len(found)):
                    if found[:lift] in self.copies:
                        return found[:lift], False
                return found, stop == len(path)
        return None, False

    def _sink(self, path: Path, text: str, rank: tuple[int, int]) -> None:
        """A comment or note with no output node: where its top-level entry was, or above the first written key."""
        entry = str(path[0]) if path else None
        if entry is not None and entry in self.kept:
            self.before.setdefault(entry, []).append(text)
        elif entry is not None and entry in self.placed:
            self.heads.setdefault((self.placed[entry][0],), []).append((*rank, text))
        elif entry is not None and entry in {str(key.value) for key, _ in self.node.value}:
            self.in_place.setdefault(entry, []).append(text)
        else:
            self.loose.append(text)

    def _place(self, comment: Comment) -> None:
        found, own = self._home(comment.path)
        if found is None:
            self._sink(comment.path, comment.text, (0, comment.line))
            return
        kind = comment.kind if own else "head"
        if kind == "eol" and isinstance(found[-1], int):
            _, value = _lookup(self.out, found)
            if isinstance(value, (dict, list)) and value:  # a block item's line is its first key's: put it above
                kind = "head"
        target = self.comments.setdefault(found, Comments())
        if kind == "eol" and target.eol is None:
            target.eol = comment.text
        elif kind == "tail":
            target.tail.append(comment.text)
        else:
            self.heads.setdefault(found, []).append((0, comment.line, comment.text))

    def _rank(self, path: Path) -> tuple[int, ...]:
        """Where output ``path`` is written, as a sortable key (mapping keys by position)."""
        rank = []
        value: Any = self.out
        for part in path:
            if isinstance(value, dict):
                rank.append(list(value).index(part))
                value = value[part]
            else:
                rank.append(int(part))
                value = value[int(part)]
        return tuple(rank)

    def _scalar_in_place(self, region: _Region, value: Any) -> str | None:
        node = region.value
        if isinstance(value, (dict, list)) or not isinstance(node, yaml.ScalarNode):
            return None
        if (
            node.style in ("|", ">")
            or node.start_mark.line != node.end_mark.line
            or node.start_mark.line != region.line
        ):
            return None
        text = self.lines.lines[region.line]
        return text[: node.start_mark.column] + restyle(node.style, value) + text[node.end_mark.column :]

    def _plan(self, value: Any, path: Path) -> None:
        """Reuse source text for every output node (outermost first) whose source holds the same data."""
        src = self.origins.get(path)
        if src is not None and len(path) > 1:
            copy = self._copy(src, value)
            if copy is not None:
                self.copies[path] = copy
                return
        if isinstance(value, dict):
            for key, item in value.items():
                self._plan(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self._plan(item, (*path, index))

    def _copy(self, src: Path, value: Any) -> Copy | None:
        """Source text for ``value`` when the source at ``src`` holds the same data and can be moved as text."""
        found = self.tree.nodes.get(src)
        if found is None or not isinstance(found[1], _NODE_FOR.get(type(value), yaml.ScalarNode)):
            return None
        exists, data = _lookup(self.data, src)
        if not exists or not _same(value, data):
            return None
        node: Any = found[1]
        start = node.start_mark
        if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
            if start.line != node.end_mark.line or getattr(node, "style", None) in ("|", ">"):
                return None
            text = self.lines.lines[start.line][start.column : node.end_mark.column]
            return None if "&" in text or "*" in text or not text else Copy(text, [], 0)
        if not node.value:
            return None
        column = start.column
        first = self.lines.lines[start.line]
        if isinstance(node, yaml.SequenceNode):
            column = first.rfind("-", 0, start.column)
            if column < 0:
                return None
        if first[:column].strip():
            return None
        last = content_end(node, self.lines)[0]
        block = self.lines.lines[start.line : last + 1]
        for offset, line in enumerate(block):
            index = start.line + offset
            if "&" in line or "*" in line:
                return None
            content = line.strip() and not self.tree.is_comment(self.lines, index) and index not in self.tree.interior
            if content and indentation(line) < column:
                return None
        self.consumed.update(range(start.line, last + 1))
        return Copy(None, block, column)

    def _flow(self) -> _Edit:
        """A flow-style (or JSON) policy: written again whole, as JSON-compatible flow YAML in the same place."""
        node = self.node
        start, end = node.start_mark, node.end_mark
        first = self.lines.lines[start.line]
        last = self.lines.lines[end.line]
        if start.line == end.line:
            written = [first[: start.column] + json.dumps(self.out, ensure_ascii=False) + last[end.column :]]
        else:
            text = json.dumps(self.out, ensure_ascii=False, indent=2).split("\n")
            pad = " " * (indentation(first) + (2 if first[: start.column].strip() else 0))
            written = [first[: start.column] + text[0], *(pad + line for line in text[1:-1])]
            written.append(pad + text[-1] + last[end.column :])
        return _Edit(start.line, end.line + 1, written)
