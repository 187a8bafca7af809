"""The policy the descheduler chart renders from a user's values, for a pinned chart version
(docs/helm-chart.md#7-what-desched-does-with-it).

An install of the chart (:class:`desched.gitops.wrappers.Install`) hands Helm its values sources in its tool's order;
Helm merges them, then coalesces the result over the chart's ``values.yaml`` of that version
(:mod:`desched.chart.values`), and the chart's ConfigMap template writes ``deschedulerPolicy`` under an ``apiVersion``
header, hard-coded or ``deschedulerPolicyAPIVersion`` (the values', else the chart's default) as the chart version's
record says (:mod:`desched.chart.record`).

:func:`rendered` turns each source of chart values into that one policy, a :class:`ChartDoc` every reader then
judges (lint, ``desched scope``, the webhook and the executor read the engine's documents). A finding lands where
the value it is about was written: on the source that set it last (each source reports its own values), at the
chart pin for a chart default (the wrapper's version; ``deschedulerPolicy`` when the pin is in another file), its
message naming the chart version. Findings on no one value, and on defaults, are reported once, by the source that
wins over the others (the ``primary`` one), which alone stands for the install in the repository rules.

Values whose chart version is not known (a values file no wrapper in the repository pins) are judged as written.
"""

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from desched.chart.gotemplate import holds_action, tpl_strings, truthy
from desched.chart.record import ChartRelease, chart_at, chart_deploying
from desched.chart.values import coalesce, merge_sources
from desched.deployment.releases import chart_yaml_app_version, install_label
from desched.gitops.documents import CHART_VALUES, HELM_POLICY_KEY, HELM_VERSION_KEY, PolicyDoc, Shape
from desched.reading.yamlsrc import Position, YMap
from desched.tree import Path

if TYPE_CHECKING:
    from desched.deployment.releases import Deployments, Release
    from desched.gitops.wrappers import ValuesSource

__all__ = ["ChartDoc", "layers", "rendered"]


class ChartDoc(PolicyDoc):
    """The policy ``chart`` renders from the values sources ``layers`` (lowest precedence first), as one of them,
    ``source``, reports it: ``root`` is the coalesced ``deschedulerPolicy``, ``api_version`` the header the template
    writes; ``defaults`` are the paths whose values the chart's defaults supplied; ``values`` the sources merged
    (before the chart's defaults), which also render the workload (:mod:`desched.deployment.chartruns`)."""

    __slots__ = ("chart", "defaults", "layers", "no_policy", "pin", "pinned", "release", "source", "unknown", "values")

    def __init__(
        self,
        source: PolicyDoc,
        chart: ChartRelease,
        pinned: str,
        pin: Position | None,
        layers: Sequence[PolicyDoc],
        clearing: Container[int] = (),
        release: tuple[str | None, str | None] = (None, None),
        values: dict[str, Any] | None = None,
    ) -> None:
        if values is None:  # else the caller merged them, once for every source of the install
            values = merge_sources((layer.envelope for layer in layers), clearing)
        written = values.get(HELM_POLICY_KEY)
        at = source.root.line, source.root.column
        # a null (or another empty value that is no map) deletes the default: the template has no policy to write
        no_policy = HELM_POLICY_KEY in values and not isinstance(written, Mapping) and not truthy(written)
        defaults = {} if no_policy else chart.default_policy
        policy = coalesce(written if isinstance(written, Mapping) else {}, defaults, at)
        root: dict[str, Any] = policy.values
        unknown: list[Path] = []
        if chart.policy_through_tpl and holds_action(root):  # the data is costly: most policies hold no action
            root, unknown = tpl_strings(root, _template_data(values, chart, release))
        super().__init__(
            source.file, cast(YMap, root), _api_version(values, chart), source.kind, Shape.HELM, source.object,
            source.envelope, extra=source.extra,
        )  # fmt: skip
        self.line_offset, self.column_offset, self.fixed = source.line_offset, source.column_offset, source.fixed
        self.prefix = source.prefix
        self.chart = chart
        self.defaults = policy.defaults
        self.source = source
        self.layers = tuple(layers)
        self.values = values
        self.pinned = pinned  # how the chart version is known: "pinned by <wrapper>", or the release it deploys
        self.pin = pin
        #: ``deschedulerPolicy`` is null (or another empty value): the chart writes no policy desched can judge
        self.no_policy = no_policy
        #: The policy paths whose strings ``tpl`` makes something desched cannot compute: nothing is judged there
        self.unknown = frozenset(unknown)
        self.release = release  # the Helm release's name and namespace, where the install writes them

    @property
    def renders_no_policy(self) -> bool:
        return self.no_policy

    @property
    def primary(self) -> bool:
        """Whether this source wins over the others: it reports what no one source wrote."""
        return self.layers[-1] is self.source

    @property
    def assumed(self) -> bool:
        """Whether the chart version is the one of the release desched assumes, not one a pin names."""
        return not self.pinned.startswith("pinned by ")

    def supplied(self, path: Sequence[str | int]) -> bool:
        """Whether the value at ``path`` (or an ancestor of it) came from the chart's defaults."""
        return any(tuple(path[:end]) in self.defaults for end in range(1, len(path) + 1))

    def writer(self, path: Sequence[str | int]) -> PolicyDoc | None:
        """The source whose value at ``path`` the policy holds (the last that sets it); ``None`` for a default, or
        for a path no source sets whole (the policy itself). A path into the values around the policy
        (:data:`~desched.gitops.documents.CHART_VALUES`) is this source's own; the ``apiVersion`` is the last source's
        that sets ``deschedulerPolicyAPIVersion``."""
        if not path or self.supplied(path):
            return None
        if path[0] == CHART_VALUES:
            return self.source
        if path[0] == "apiVersion":
            return next((layer for layer in reversed(self.layers) if HELM_VERSION_KEY in layer.envelope), None)
        return next((layer for layer in reversed(self.layers) if _holds(layer.root, path)), None)

    def values_writer(self, path: Sequence[str | int]) -> PolicyDoc | None:
        """The last source of the install whose values (around the policy) hold ``path``; ``None`` when none does
        (a chart default)."""
        return next((layer for layer in reversed(self.layers) if _holds(layer.envelope, path)), None)

    def reported_here(self, path: Sequence[str | int]) -> bool:
        if any(tuple(path[:end]) in self.unknown for end in range(1, len(path) + 1)):
            return False  # a value known only once Helm renders it
        writer = self.writer(path)
        return writer is self.source or (writer is None and self.primary)

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        if self.writer(path) is self.source:
            return self.source.position(path, key=key)
        if self.pin is not None and self.supplied(path):
            return self.pin
        return self.source.position(path[:1] if path and path[0] in self.source.root else (), key=key)

    def chart_default(self, path: Sequence[str | int]) -> str | None:
        if not self.supplied(path):
            return None
        return f"a default of chart {self.chart.version}, {self.pinned}, not a value these values set"


def _holds(tree: Any, path: Sequence[str | int]) -> bool:
    for part in path:
        in_map = isinstance(tree, Mapping) and isinstance(part, str) and part in tree
        if not in_map and not (isinstance(tree, list) and isinstance(part, int) and 0 <= part < len(tree)):
            return False
        tree = tree[part]
    return True


def _api_version(values: Mapping[str, Any], chart: ChartRelease) -> Any:
    """The ``apiVersion`` header the chart's ConfigMap template writes for the merged ``values``."""
    if not chart.api_version_templated or HELM_VERSION_KEY not in values:
        return chart.default_api_version
    value = values[HELM_VERSION_KEY]
    return "" if value is None else value  # a null deletes the default: the template writes an empty apiVersion


def _template_data(
    values: Mapping[str, Any], chart: ChartRelease, release: tuple[str | None, str | None]
) -> dict[str, Any]:
    """What ``tpl`` hands the policy's template: the values over the chart's defaults, the chart's ``Chart.yaml``
    facts, and the release's name and namespace where the install writes them."""
    name, namespace = release
    known = {"Name": name, "Namespace": namespace, "Service": "Helm"}
    return {
        "Values": coalesce(values, chart.values_defaults, shared=True).values,
        "Chart": {"Name": chart.name, "Version": chart.version, "AppVersion": chart.app_version},
        "Release": {key: value for key, value in known.items() if value is not None},
    }


def layers(found: "Sequence[tuple[ValuesSource, PolicyDoc]]") -> tuple[list[PolicyDoc], frozenset[int]]:
    """The values sources of an install in precedence order, lowest first, as their tool combines them: each over
    the ones before (``over``, ``clear``), under them (``under``: kustomize ``valuesMerge: merge``), or instead of
    them (``replace``); and the indexes (in that order) of those whose nulls clear a key (``clear``)."""
    ordered: list[tuple[ValuesSource, PolicyDoc]] = []
    for source, doc in found:
        if source.merge == "replace":
            ordered = [(source, doc)]
        elif source.merge == "under":
            ordered.insert(0, (source, doc))
        else:
            ordered.append((source, doc))
    clearing = frozenset(index for index, (source, _) in enumerate(ordered) if source.merge == "clear")
    return [doc for _, doc in ordered], clearing


def rendered(doc: PolicyDoc, deployments: "Deployments", release: "Release | None" = None) -> PolicyDoc:
    """``doc`` as the chart renders it, when ``doc`` is a source of chart values: of an install (``deployments``)
    whose chart version is known, else of the chart that deploys ``release`` (the release desched assumes the values
    run on; not for the values of a vendored chart, a ``Chart.yaml`` of the descheduler chart beside them, which are
    that chart's defaults themselves); ``doc`` itself for anything else."""
    if doc.shape != Shape.HELM or isinstance(doc, ChartDoc) or doc.unreached is not None:
        return doc
    found = deployments.install_of(doc)
    version = doc.extra.get("chart_version")
    if found is None or found[1].version is None:  # values whose pin the repository does not index, or no pin
        alone = chart_at(version) if isinstance(version, str) else None
        pinned = f"pinned by {doc.extra.get('wrapper') or 'the wrapper'}"
        if alone is None and release is not None and chart_yaml_app_version(doc.file) is None:
            alone = chart_deploying(release.minor, release.version)
            pinned = f"the chart of release {release.version} ({release.reason}; no chart version is pinned)"
        return doc if alone is None else ChartDoc(doc, alone, pinned, doc.extra.get("pin"), [doc])
    file, install = found
    chart = chart_at(install.version) if install.version is not None else None
    if chart is None:
        return doc

    merged = deployments.memo(
        ("chart values", file, id(install)), lambda: _Merged.of(deployments.sources(install, file))
    )
    label = install_label(install, file, doc)
    if id(doc) not in merged.members:  # a source the tool drops: kustomize valuesMerge: replace
        doc.extra["unreached"] = (
            f"{label} renders without these values: its valuesMerge: replace puts valuesInline in place of "
            "valuesFile; merge them into valuesInline, or set valuesMerge: override"
        )
        return doc
    pin = doc.extra.get("pin") if file == doc.file else None
    return ChartDoc(
        doc, chart, f"pinned by {label}", pin, merged.ordered, merged.clearing, install.release, merged.values
    )


class _Merged(NamedTuple):
    """The values sources of one install as :func:`layers` orders them, the ``id`` of each (``members``) and their
    merged values: the same for every source of the install, so computed once for them all (the install's
    :meth:`~desched.deployment.releases.Deployments.memo`, which holds the documents, so the ids stay theirs)."""

    ordered: list[PolicyDoc]
    clearing: frozenset[int]
    members: frozenset[int]
    values: dict[str, Any]

    @classmethod
    def of(cls, found: "Sequence[tuple[ValuesSource, PolicyDoc]]") -> "_Merged":
        """The merge of the sources ``found`` (:meth:`~desched.deployment.releases.Deployments.sources`)."""
        ordered, clearing = layers(found)
        values = merge_sources((layer.envelope for layer in ordered), clearing)
        return cls(ordered, clearing, frozenset(map(id, ordered)), values)
