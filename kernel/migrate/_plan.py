"""Deciding the edits of a stream: every candidate converted, and what its text becomes.

:func:`plan` goes through the candidates :mod:`~desched.migrate._locate` found. A policy is converted for the release
it is written for (the one deployed with it, else :data:`PORTABLE`); a conversion error refuses the file at the
source position it names. A key whose text was migrated on its own gets that text back in the same scalar; Helm
values get ``deschedulerPolicyAPIVersion: descheduler/v1alpha2``. For a block policy mapping, :class:`_PolicyPlan`
decides which source entries are kept, replaced in place or removed, where each new key goes, which source text is
reused for an output node (a :class:`~desched.migrate._emit.Copy`, when ``reuse`` is on), and where each comment of
a removed entry and each conversion note (a ``# desched migrate:`` line) goes.

:mod:`~desched.migrate._emit` writes the text of what is decided here. The result (:class:`StreamPlan`) holds the
edits, the notes with their lines in the stream, and the data :func:`~desched.migrate._verify.verified` must read
at each rewritten path.
"""

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

import yaml

from desched import versions
from desched.chart.record import api_version_upgrade, chart_at
from desched.deployment.releases import Deployments, Release, chart_release, configured
from desched.gitops.documents import HELM_POLICY_KEY, HELM_VERSION_KEY, Shape, is_misdeclared_v1alpha1
from desched.migrate._emit import (
    Comments,
    Copy,
    Edit,
    Emitter,
    Layout,
    Style,
    flow_edit,
    helm_version_edit,
    mapping_edit,
    policy_style,
    replaced,
    restyle,
    text_edit,
)
from desched.migrate._locate import (
    TEXT_SHAPES,
    Candidate,
    MigrationProblem,
    Refused,
    Region,
    Source,
    Unsafe,
    child,
    helm_note_line,
    helm_source,
    note_line,
    regions,
)
from desched.migrate._splice import Comment, Lines, Path, Tree, collect, content_end, indentation
from desched.migrate._verify import same_data
from desched.migrate.convert import V1ALPHA1, V1ALPHA2, Conversion, ConversionError, Note, convert

__all__ = ["COMMENT_PREFIX", "PORTABLE", "MigrationOptions", "StreamPlan", "Texts", "plan"]

#: How the notes written into a migrated file begin.
COMMENT_PREFIX = "# desched migrate: "

#: What migrate writes when nothing names the release that runs a policy: output every release from v0.31 (the first
#: without v1alpha1) to the newest accepts, so DefaultEvictor keeps its booleans rather than v0.34's podProtections.
PORTABLE = Release(
    versions.V1ALPHA1_REMOVED,
    f"{versions.render(versions.V1ALPHA1_REMOVED)}-{versions.render(versions.NEWEST)}",
    "no release is deployed with this policy, so the output is what every release from "
    f"{versions.render(versions.V1ALPHA1_REMOVED)} to {versions.render(versions.NEWEST)} accepts "
    "(DefaultEvictor's booleans, not podProtections); --target-version writes for one release",
)

_NODE_FOR: dict[type, type[yaml.Node]] = {dict: yaml.MappingNode, list: yaml.SequenceNode}

#: The migrated text of each ``configmap`` and ``values-text`` candidate (by path), with its notes and their lines.
Texts = dict[Path, tuple[str, list[tuple[Note, int]]]]


class MigrationOptions(NamedTuple):
    """What :func:`desched.migrate.rewrite.migrate_text` was asked, with the file's ``name`` and the descheduler
    ``deployments`` known."""

    target: int | None
    upstream_compatible: bool
    merge_profiles: bool
    chart_version: str | None
    name: str
    deployments: Deployments


def plan(
    source: Source, candidates: list[Candidate], texts: Texts, options: MigrationOptions, reuse: bool
) -> "StreamPlan":
    """The plan of every candidate of a stream; ``reuse``: copy source text where it holds the same data. The
    problems of every candidate that cannot be converted refuse the file together."""
    planned = StreamPlan(source, texts, options, reuse)
    problems: list[MigrationProblem] = []
    for candidate in candidates:
        try:
            planned.add(candidate)
        except Refused as exc:
            problems.extend(exc.problems)
    if problems:
        raise Refused(*problems)
    return planned


def _as_declared(policy: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the converter reads: misdeclared v1alpha1 content as the v1alpha1 it is."""
    return {**policy, "apiVersion": V1ALPHA1} if is_misdeclared_v1alpha1(policy) else policy


def _written_for(release: Release) -> Note:
    return Note("info", f"written for descheduler {release.version}: {release.reason}", ())


def _lookup(data: Any, path: Path) -> tuple[bool, Any]:
    for part in path:
        found = (isinstance(data, dict) and isinstance(part, str) and part in data) or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        )
        if not found:
            return False, None
        data = data[part]
    return True, data


def _stream_path(candidate: Candidate, path: Path) -> Path:
    """Where the source ``path`` of the policy of ``candidate`` is in the stream: in Helm values, ``apiVersion`` is
    the chart's version key and ``kind`` the policy key."""
    if candidate.shape != Shape.HELM:
        return (*candidate.path, *path)
    if path[:1] == ("apiVersion",):
        return (*candidate.path, HELM_VERSION_KEY)
    if path[:1] == ("kind",):
        return (*candidate.path, HELM_POLICY_KEY)
    return (*candidate.path, HELM_POLICY_KEY, *path)


class StreamPlan:
    """The ``edits`` of one attempt at a stream, its ``notes`` with their 1-based lines, and ``subs``: the data the
    new text must hold at each rewritten path."""

    def __init__(self, source: Source, texts: Texts, options: MigrationOptions, reuse: bool) -> None:
        self.source = source
        self.texts = texts
        self.options = options
        self.reuse = reuse
        self.edits: list[Edit] = []
        self.notes: list[tuple[Note, int]] = []
        self.subs: dict[Path, Any] = {}

    def add(self, candidate: Candidate) -> None:
        document = self.source.document(candidate.path)
        if candidate.shape in TEXT_SHAPES:
            self._text(candidate, document)
        elif candidate.shape == Shape.HELM:
            self._helm(candidate, self.source.node(candidate.path), document)
        else:
            self._policy(candidate, self.source.node(candidate.path), document)

    def _text(self, candidate: Candidate, document: Any) -> None:
        new, notes = self.texts[candidate.path]
        key, value = self.source.entry(candidate.path)
        self.edits.append(text_edit(self.source.lines, document, key, value, candidate.text, new))
        self.subs[candidate.path] = new
        # inside a literal block, line n of the policy is n lines below the header; elsewhere, the key's line
        header = value.start_mark.line + 1
        for note, line in notes:
            self.notes.append((note, header + line if value.style == "|" else key.start_mark.line + 1))

    def _helm(self, candidate: Candidate, values: Any, document: Any) -> None:
        self._refuse_hard_coded_chart(candidate)
        release, conversion = self._convert(candidate, self._rendered_source(candidate))
        out = {key: value for key, value in conversion.policy.items() if key not in ("apiVersion", "kind")}
        _, policy = child(values, HELM_POLICY_KEY)
        tree = self._policy_edits(policy, document, candidate.data[HELM_POLICY_KEY], out, conversion)
        self.edits.append(helm_version_edit(self.source.lines, values))
        self.subs[(*candidate.path, HELM_POLICY_KEY)] = out
        self.subs[(*candidate.path, HELM_VERSION_KEY)] = V1ALPHA2
        self._notes(release, conversion.notes, values, partial(helm_note_line, values, tree))

    def _rendered_source(self, candidate: Candidate) -> dict[str, Any]:
        """The policy of Helm values as the pinned chart runs it, for the converter: a chart whose defaults are
        v1alpha1 strategies (before 0.30) merges them under the values' strategies, and they all run
        (docs/helm-chart.md#4-user-values-over-the-defaults); converted, they are written out, since a v1alpha2
        policy drops the default strategies."""
        source = helm_source(candidate.data)
        chart = chart_at(candidate.hint) if candidate.hint else None
        defaults = chart.default_policy if chart is not None else {}
        if "strategies" not in defaults or not isinstance(source.get("strategies"), Mapping):
            return source
        from desched.chart.values import coalesce  # only values pinned to a v1alpha1 chart pay for it

        merged = coalesce({"strategies": source["strategies"]}, {"strategies": defaults["strategies"]})
        return {**source, "strategies": merged.values["strategies"]}

    def _refuse_hard_coded_chart(self, candidate: Candidate) -> None:
        """:class:`Refused` when the wrapper of Helm values pins a chart whose ConfigMap template hard-codes the
        v1alpha1 apiVersion (docs/helm-chart.md#12-the-apiversion-line): profiles written there would be rendered
        under v1alpha1, whose decoder drops them, and the descheduler would start and evict nothing."""
        chart = chart_at(candidate.hint) if candidate.hint else None
        upgrade = api_version_upgrade(chart)
        if chart is None or upgrade is None:
            return
        line, column = self.source.position(_stream_path(candidate, ()))
        message = (
            f"{candidate.wrapper} pins descheduler chart {chart.version}, whose ConfigMap template hard-codes "
            f"apiVersion {chart.default_api_version} (charts before {upgrade.rsplit('.', 1)[0]} do not read "
            f"{HELM_VERSION_KEY}): profiles would be dropped by the v1alpha1 decoder and nothing would run. Upgrade "
            f"the chart to {upgrade} or later and migrate again (the values then get {HELM_VERSION_KEY}: "
            f"{V1ALPHA2}), or keep the v1alpha1 strategies until then"
        )
        raise Refused(MigrationProblem(message, line, column))

    def _refuse_release_before_v1alpha2(self, candidate: Candidate, release: Release) -> None:
        """:class:`Refused` when the descheduler deployed with the policy predates descheduler/v1alpha2 (an image
        before v0.27): it cannot decode what migrate writes, and would fail to start."""
        if release.minor >= versions.OLDEST:
            return
        line, column = self.source.position(_stream_path(candidate, ()))
        first = versions.render(versions.OLDEST)
        message = (
            f"the descheduler deployed with this policy is {release.version} ({release.reason}), which predates "
            f"{V1ALPHA2} (first in {first}.0) and cannot decode it: upgrade the descheduler to {first}.0 or later "
            "and migrate again, or keep the v1alpha1 policy until then"
        )
        raise Refused(MigrationProblem(message, line, column))

    def _policy(self, candidate: Candidate, node: Any, document: Any) -> None:
        release, conversion = self._convert(candidate, candidate.data)
        tree = self._policy_edits(node, document, candidate.data, conversion.policy, conversion)
        self.subs[candidate.path] = conversion.policy
        self._notes(release, conversion.notes, node, partial(note_line, node, tree))

    def _policy_edits(
        self, node: Any, document: Any, data: Mapping[str, Any], out: dict[str, Any], conversion: Conversion
    ) -> Tree:
        """Plan the rewrite of the policy mapping ``node`` (source ``data``) as ``out``; its tree, for note lines."""
        tree = Tree(node)
        style = policy_style(node, document, self.source.lines.lines)
        policy = _PolicyPlan(self.source.lines, tree, node, data, out, conversion.origins, style)
        self.edits.extend(policy.edits(conversion.notes, self.reuse))
        return tree

    def _notes(self, release: Release, notes: list[Note], anchor: Any, line_of: Callable[[Path], int]) -> None:
        """Which release the policy at node ``anchor`` is written for, then its conversion notes, each on its line."""
        self.notes.append((_written_for(release), anchor.start_mark.line + 1))
        for note in notes:
            self.notes.append((note, line_of(note.path)))

    def _convert(self, candidate: Candidate, source: Mapping[str, Any]) -> tuple[Release, Conversion]:
        """The release the output of ``candidate`` is written for, and its policy ``source`` converted for it."""
        release = self._release(candidate)
        self._refuse_release_before_v1alpha2(candidate, release)
        try:
            conversion = convert(
                _as_declared(source),
                upstream_compatible=self.options.upstream_compatible,
                target=release.target,
                merge_profiles=self.options.merge_profiles,
                strict=True,
            )
        except ConversionError as exc:
            line, column = self.source.position(_stream_path(candidate, tuple(exc.path)))
            raise Refused(MigrationProblem(exc.message, line, column)) from None
        return release, conversion

    def _release(self, candidate: Candidate) -> Release:
        """The release the output of ``candidate`` is written for (see :func:`desched.migrate.rewrite.migrate_text`)."""
        if self.options.target is not None:
            return configured(self.options.target, "--target-version")
        found = candidate.release
        if found is None and candidate.shape == Shape.HELM:
            image = candidate.data.get("image")
            tag = image.get("tag") if isinstance(image, dict) else None
            found = chart_release(tag, candidate.hint, candidate.wrapper, self.options.chart_version)
        return found if found is not None else PORTABLE


class _PolicyPlan:
    """What becomes of the lines of one policy mapping.

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

    def edits(self, notes: list[Note], reuse: bool) -> list[Edit]:
        """The edit of the policy, with ``notes`` written in; ``reuse``: copy source text where it holds the same
        data (else every new node is written from data)."""
        if not isinstance(self.node, yaml.MappingNode) or self.node.flow_style or not self.node.value:
            return [flow_edit(self.lines, self.node, self.out)]
        entries = regions(self.lines, self.tree, self.node)
        by_key = {region.key.value: region for region in entries}
        if len(by_key) != len(entries):
            raise Unsafe("duplicate keys")
        self._decide(by_key)
        written = [key for keys in self.placed.values() for key in keys]
        if reuse:
            for key in written:
                self._reuse(self.out[key], (key,))
        self._index_targets(written)
        self._carry_comments(entries)
        self._carry_notes(notes)
        self._settle_heads(written)
        emitter = Emitter(self.style, self.comments, self.copies)
        layout = Layout(self.out, self.kept, self.placed, self.before, self.in_place, self.loose, emitter)
        return [mapping_edit(self.lines, entries, layout)]

    def _decide(self, by_key: dict[str, Region]) -> None:
        """Which source entries are kept, and where each other output key is written."""
        previous: str | None = None
        for key, value in self.out.items():
            source = self._source_entry(key, by_key)
            if source == key and self._keep(key, value, by_key[key]):
                previous = key
                continue
            anchor = source if source is not None else previous
            self.placed.setdefault(anchor, []).append(key)
            previous = anchor

    def _source_entry(self, key: str, by_key: dict[str, Region]) -> str | None:
        """The source entry output ``key`` is made from (its origin's top-level entry), else the one of that key."""
        origin = self.origins.get((key,))
        if origin and len(origin) == 1 and str(origin[0]) in by_key:
            return str(origin[0])
        return key if key in by_key else None

    def _keep(self, key: str, value: Any, region: Region) -> bool:
        """Keep source entry ``key`` for output ``value``: as written when it holds the same data, or with its
        one-line scalar replaced in place."""
        if key in self.data and same_data(value, self.data[key]):
            self.kept[key] = None
            return True
        written = self._scalar_in_place(region, value)
        if written is None:
            return False
        self.kept[key] = written
        return True

    def _scalar_in_place(self, region: Region, value: Any) -> str | None:
        """The key's line of ``region`` with its one-line scalar replaced by ``value`` (same quoting), if it has one."""
        node = region.value
        if isinstance(value, (dict, list)) or not isinstance(node, yaml.ScalarNode):
            return None
        if (
            node.style in ("|", ">")
            or node.start_mark.line != node.end_mark.line
            or node.start_mark.line != region.line
        ):
            return None
        return replaced(self.lines, node, restyle(node.style, value))

    def _index_targets(self, written: list[str]) -> None:
        """The written output nodes made from each source node; a removed entry's own comments go to the first key
        written in its place when nothing is made from it."""
        for out_path, src in self.origins.items():
            if src and out_path and out_path[0] in written:
                self.targets.setdefault(src, []).append(out_path)
        for anchor, keys in self.placed.items():
            if anchor is not None and anchor not in self.kept and (anchor,) not in self.targets:
                self.destinations[(anchor,)] = (keys[0],)

    def _carry_comments(self, entries: list[Region]) -> None:
        """Every comment of a removed entry (not inside copied text) to where it goes."""
        for region in entries:
            if region.key.value not in self.kept:
                for comment in collect(self.lines, self.tree, region.head, region.last, (region.key.value,)):
                    if comment.line not in self.consumed:
                        self._place(comment)

    def _carry_notes(self, notes: list[Note]) -> None:
        """Every note, as a comment above the output node made from what it concerns, else where its entry was."""
        for number, note in enumerate(notes):
            text = COMMENT_PREFIX + " ".join(note.message.split())
            found, _ = self._home(tuple(note.path))
            if found is not None:
                self.heads.setdefault(found, []).append((1, number, text))
            else:
                self._sink(tuple(note.path), text, (1, number))

    def _settle_heads(self, written: list[str]) -> None:
        """The lines above each output node, comments (in source order) before notes; loose ones above the first
        written key."""
        for path, entries in self.heads.items():
            self.comments.setdefault(path, Comments()).head.extend(text for _, _, text in sorted(entries))
        if self.loose and written:
            self.comments.setdefault((written[0],), Comments()).head[:0] = self.loose
            self.loose = []

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

    def _reuse(self, value: Any, path: Path) -> None:
        """Reuse source text for every output node (outermost first) whose source holds the same data."""
        src = self.origins.get(path)
        if src is not None and len(path) > 1:
            copy = self._copy(src, value)
            if copy is not None:
                self.copies[path] = copy
                return
        if isinstance(value, dict):
            for key, item in value.items():
                self._reuse(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self._reuse(item, (*path, index))

    def _copy(self, src: Path, value: Any) -> Copy | None:
        """Source text for ``value`` when the source at ``src`` holds the same data and can be moved as text."""
        node = self._same_source(src, value)
        if node is None:
            return None
        if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
            return self._inline_copy(node)
        return self._block_copy(node)

    def _same_source(self, src: Path, value: Any) -> Any:
        """The composed node at ``src`` when it is the kind of node ``value`` is written as and holds ``value``."""
        found = self.tree.nodes.get(src)
        if found is None or not isinstance(found[1], _NODE_FOR.get(type(value), yaml.ScalarNode)):
            return None
        exists, data = _lookup(self.data, src)
        return found[1] if exists and same_data(value, data) else None

    def _inline_copy(self, node: Any) -> Copy | None:
        """A one-line scalar (not a block scalar) or flow collection, as written, unless it has an anchor or alias."""
        start, end = node.start_mark, node.end_mark
        if start.line != end.line or getattr(node, "style", None) in ("|", ">"):
            return None
        text = self.lines.lines[start.line][start.column : end.column]
        return None if "&" in text or "*" in text or not text else Copy(text, [], 0)

    def _block_copy(self, node: Any) -> Copy | None:
        """The lines of a block collection that begins its line (after its dash) and that no line of content leaves
        to the left; nothing in them may be an anchor or alias. Its lines are then consumed, with their comments."""
        if not node.value:
            return None
        start = node.start_mark
        column = self._block_column(node)
        if column is None:
            return None
        last = content_end(node, self.lines)[0]
        block = self.lines.lines[start.line : last + 1]
        if not self._movable(block, start.line, column):
            return None
        self.consumed.update(range(start.line, last + 1))
        return Copy(None, block, column)

    def _block_column(self, node: Any) -> int | None:
        """The column of a block collection's first key or first dash, when nothing stands before it on its line."""
        start = node.start_mark
        column: int = start.column
        first = self.lines.lines[start.line]
        if isinstance(node, yaml.SequenceNode):
            column = first.rfind("-", 0, start.column)
            if column < 0:
                return None
        return None if first[:column].strip() else column

    def _movable(self, block: list[str], first: int, column: int) -> bool:
        """Whether source lines ``block`` (from line ``first``) can move as text: no anchor or alias, no line of
        content left of ``column``."""
        for offset, line in enumerate(block):
            index = first + offset
            if "&" in line or "*" in line:
                return False
            content = line.strip() and not self.tree.is_comment(self.lines, index) and index not in self.tree.interior
            if content and indentation(line) < column:
                return False
        return True
