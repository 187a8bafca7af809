"""Where descheduler configuration lives inside a YAML file, and how to point back at it.

:func:`extract` walks the documents of one file and returns a :class:`PolicyDoc` for every DeschedulerPolicy it
finds: a raw policy document, a policy held in any ``data`` key of a ConfigMap (the chart's default key is
``policy.yaml``), or the descheduler Helm chart's values (``deschedulerPolicy`` + ``deschedulerPolicyAPIVersion``):
on their own, inside a GitOps wrapper (a Flux HelmRelease, an Argo CD Application or ApplicationSet, kustomize
``helmCharts``; :mod:`desched.gitops.wrappers`), or as text in a ConfigMap key or Argo CD's ``helm.values``; also inside
``kind: List``. OpenShift's ``KubeDescheduler`` (operator.openshift.io/v1) is returned as a :class:`PolicyDoc` of
shape :attr:`Shape.KUBEDESCHEDULER` whose ``root`` is the whole object. Everything else is returned as ``others``
untouched (later analyses read workloads from it). A :class:`PolicyDoc` maps a JSON-pointer path inside
the policy to a line and column of the *outer* file, including inside a ConfigMap's block scalar.
"""

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.gitops.wrappers import (
    FluxSource,
    Install,
    flux_sources,
    install_values,
    installs,
    is_flux_source_kind,
    is_values_text,
    object_label,
    renders_defaults_only,
)
from desched.patterns import lazy
from desched.reading.yamlsrc import NodeBudget, Position, YamlError, YMap, YSeq, load_all, locate
from desched.tree import Path, TextEnum, mapping_or_empty

if TYPE_CHECKING:
    from desched.gitops.umbrella import Dependency

__all__ = [
    "CHART_VALUES",
    "CONFIGMAP_POLICY_KEY",
    "HELM_POLICY_KEY",
    "HELM_VERSION_KEY",
    "KUBEDESCHEDULER",
    "POLICY_GROUP",
    "EmbeddedError",
    "Extraction",
    "Location",
    "PolicyDoc",
    "Shape",
    "block_offsets",
    "configmap_keys",
    "extract",
    "extract_configmap_key",
    "is_misdeclared_v1alpha1",
    "locate_policies",
    "looks_like_policy",
    "object_identity",
    "policy_key",
]

POLICY_GROUP = "descheduler"
KUBEDESCHEDULER = "KubeDescheduler"
HELM_POLICY_KEY = "deschedulerPolicy"
HELM_VERSION_KEY = "deschedulerPolicyAPIVersion"
CONFIGMAP_POLICY_KEY = "policy.yaml"  # the chart's data key
#: First element of a path that leaves the policy for the chart values around it (``(CHART_VALUES, "image")``).
CHART_VALUES = ".."
_BLOCK_HEADER = lazy(r"[|>]([1-9]?)[+-]?([1-9]?)")


class Shape(TextEnum):
    """What holds a policy (or holds none) where :func:`locate_policies` finds it: the ``shape`` of a
    :class:`Location` and of a :class:`PolicyDoc`. A member is its text, so it compares equal to it."""

    POLICY = "policy"  # a raw DeschedulerPolicy document
    CONFIGMAP = "configmap"  # a ConfigMap whose data keys hold a policy as text
    HELM = "helm"  # the descheduler chart's values (``deschedulerPolicy``)
    VALUES_TEXT = "values-text"  # a mapping whose keys hold the chart's values as text (Location only)
    KUBEDESCHEDULER = "kubedescheduler"  # OpenShift's KubeDescheduler (the whole object)
    RENDERED = "rendered"  # the policy rendered from a document of another shape (a DerivedDoc only)
    OTHER = "other"  # a document that holds no policy (Location only)


class PolicyDoc:
    """One descheduler policy found in a file.

    ``root`` is the policy mapping, ``api_version``/``kind`` are its envelope values (``None`` when absent),
    ``shape`` is :attr:`Shape.POLICY`, :attr:`~Shape.CONFIGMAP`, :attr:`~Shape.HELM` or
    :attr:`~Shape.KUBEDESCHEDULER` (``root`` is then the whole KubeDescheduler object, not a policy).
    :meth:`position` answers outer-file positions.
    """

    __slots__ = (
        "api_version",
        "column_offset",
        "envelope",
        "extra",
        "file",
        "fixed",
        "kind",
        "line_offset",
        "object",
        "prefix",
        "root",
        "shape",
    )  # fmt: skip

    def __init__(
        self,
        file: str,
        root: YMap,
        api_version: Any,
        kind: Any,
        shape: Shape,
        object: str,
        envelope: YMap,
        *,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.file = file
        self.root = root
        self.api_version = api_version
        self.kind = kind
        self.shape = shape
        self.object = object
        self.envelope = envelope
        self.line_offset = 0
        self.column_offset = 0
        self.fixed: Position | None = None
        self.extra = extra or {}
        self.prefix: Path = ()  # the policy's path in the object that holds it, for JSON pointers (wrappers only)

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        """Outer-file (line, column) of the value at ``path`` (of its key when ``key``), nearest ancestor if absent."""
        if self.fixed is not None:
            return self.fixed
        if self.shape == Shape.HELM and path and path[0] == CHART_VALUES:
            pos = locate(self.envelope, path[1:], key=key)
        elif self.shape == Shape.HELM and path and path[0] in ("apiVersion", "kind"):
            if HELM_VERSION_KEY in self.envelope and path[0] == "apiVersion":
                pos = locate(self.envelope, [HELM_VERSION_KEY], key=key)
            else:
                pos = locate(self.envelope, [HELM_POLICY_KEY], key=True)
        else:
            pos = locate(self.root, path, key=key)
        line, column = pos or (self.root.line, self.root.column)
        return line + self.line_offset, column + self.column_offset

    def source_path(self, path: Sequence[str | int]) -> tuple[str | int, ...]:
        """The path of ``path`` in the document as written (the identity, except for converted documents)."""
        return tuple(path)

    @property
    def unreached(self) -> str | None:
        """Why these chart values never reach the chart (a tool drops them, an umbrella chart keeps them); ``None``
        for a policy that runs."""
        reason = self.extra.get("unreached")
        return reason if isinstance(reason, str) else None

    @property
    def renders_no_policy(self) -> bool:
        """Whether these are chart values from which the chart writes no policy desched can judge
        (``deschedulerPolicy: null``, :mod:`desched.deployment.chartrender`): only the rules that say so run."""
        return False

    def reported_here(self, path: Sequence[str | int]) -> bool:
        """Whether a finding at ``path`` is this document's to report: always, but for one of several values sources
        of a chart install, which report only the values they set (:mod:`desched.deployment.chartrender`)."""
        return True

    def chart_default(self, path: Sequence[str | int]) -> str | None:
        """Which chart default supplied the value at ``path`` (``a default of chart 0.26.0, ...``), for a policy a
        chart renders from values (:mod:`desched.deployment.chartrender`); ``None`` for a value the document itself
        writes."""
        return None

    def object_path(self, path: Sequence[str | int]) -> tuple[str | int, ...]:
        """The path of ``path`` in the object as written: in a wrapper, from the wrapper's root."""
        if path and path[0] == CHART_VALUES:
            return (*self.prefix[:-1], *path[1:])
        return (*self.prefix, *self.source_path(path))


def origin_of(origins: Mapping[Path, Path], path: Path) -> Path:
    """The source path of derived ``path``, or of its nearest ancestor that has one (``()`` if none)."""
    for end in range(len(path), -1, -1):
        found = origins.get(path[:end])
        if found is not None:
            return found
    return ()


class DerivedDoc(PolicyDoc):
    """A v1alpha2 policy derived from another document: a v1alpha1 policy's conversion, or the policy the OpenShift
    operator renders from a KubeDescheduler.

    Rules see the derived ``root``; ``origins`` maps its paths to the source paths they were made from, so every
    position and path is reported on the lines the user wrote. ``shape`` (a :class:`Shape` or its text) is the
    source's, or :attr:`Shape.RENDERED` for a rendered policy.
    """

    __slots__ = ("origins", "source")

    def __init__(self, source: PolicyDoc, derived: Any, origins: dict[Path, Path], shape: str) -> None:
        super().__init__(
            source.file, derived, "descheduler/v1alpha2", "DeschedulerPolicy", Shape(shape), source.object,
            source.envelope, extra=source.extra,
        )  # fmt: skip
        self.source = source
        self.origins = origins
        self.prefix = source.prefix

    def source_path(self, path: Sequence[str | int]) -> tuple[str | int, ...]:
        return origin_of(self.origins, tuple(path))

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        exact = tuple(path) in self.origins
        return self.source.position(self.source_path(path), key=key and exact)

    def chart_default(self, path: Sequence[str | int]) -> str | None:
        return self.source.chart_default(self.source_path(path))

    def reported_here(self, path: Sequence[str | int]) -> bool:
        return self.source.reported_here(self.source_path(path))


class EmbeddedError(NamedTuple):
    """A ConfigMap key that should hold a policy but does not parse: reported as DS001."""

    file: str
    object: str
    message: str
    line: int
    column: int


class Extraction:
    """What one file holds: policies, other documents, the wrappers whose chart values are among the policies, and
    embedded policies that do not parse. The YAML texts it holds (policies, chart values) are read on ``budget``,
    the file's (:class:`~desched.reading.yamlsrc.NodeBudget`)."""

    __slots__ = ("budget", "errors", "others", "policies", "wrappers")

    def __init__(self, budget: NodeBudget | None = None) -> None:
        self.policies: list[PolicyDoc] = []
        self.others: list[Any] = []
        self.wrappers: list[Any] = []
        self.errors: list[EmbeddedError] = []
        self.budget = budget if budget is not None else NodeBudget()


def looks_like_policy(doc: Any) -> bool:
    """True for a mapping that is, or was meant to be, a DeschedulerPolicy."""
    if not isinstance(doc, dict):
        return False
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if isinstance(api_version, str) and api_version.startswith(POLICY_GROUP + "/"):
        return True
    if kind == "DeschedulerPolicy":
        return True
    if api_version is not None or kind is not None:
        return False
    profiles, strategies = doc.get("profiles"), doc.get("strategies")
    if isinstance(profiles, list) and profiles and all(isinstance(p, dict) for p in profiles):
        return any(("plugins" in p or "pluginConfig" in p) for p in profiles)
    if isinstance(strategies, dict) and strategies:
        return all(isinstance(v, dict) for v in strategies.values())
    return False


def is_misdeclared_v1alpha1(doc: Any) -> bool:
    """True for v1alpha1 content declared ``descheduler/v1alpha2``: ``strategies`` and no ``profiles``. Upstream
    decodes it as v1alpha2 and drops every strategy silently (DS102); read as v1alpha1, it means what it says, which
    is how ``desched migrate`` reads it."""
    return (
        isinstance(doc, Mapping)
        and doc.get("apiVersion") == f"{POLICY_GROUP}/v1alpha2"
        and isinstance(doc.get("strategies"), Mapping)
        and "profiles" not in doc
    )


class Location(NamedTuple):
    """Where a document stream holds a policy, or a document that holds none.

    ``shape`` (a :class:`Shape`) is ``policy`` (a raw DeschedulerPolicy), ``helm`` (the descheduler chart's values:
    ``node`` holds ``deschedulerPolicy``), ``configmap`` (``node`` is the ConfigMap; its data ``keys`` should hold a
    policy as text), ``values-text`` (``node`` is a mapping whose ``keys`` hold the chart's values as text: a
    ConfigMap's ``data``, Argo CD's ``helm``), ``kubedescheduler`` (OpenShift's resource) or ``other``. ``path`` is
    the node's path in the stream: the document's index, then keys and indexes (``kind: List`` items included).
    Chart values found in a wrapper carry its name (``wrapper``) and the chart version it pins (``hint``); values a
    ConfigMap holds as text carry its (namespace, name) (``configmap``), which a HelmRelease's ``valuesFrom`` may
    name.
    """

    shape: Shape
    path: Path
    node: Any
    keys: tuple[str, ...] = ()
    wrapper: str = ""
    hint: str | None = None
    configmap: tuple[str | None, str] | None = None  # (namespace, name) of a ConfigMap holding values as text
    pin: Position | None = None  # where the wrapper pins the chart version (``hint``), in the file
    holder: Any = None  # the wrapper document that holds these chart values
    source: tuple[Any, ...] | None = None  # the values source in the wrapper (desched.gitops.wrappers.Source ``where``)
    unreached: str | None = None  # why these chart values never reach the chart (they are not a policy that runs)


def configmap_keys(data: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The data keys of a ConfigMap that hold a policy as text, and those that hold the chart's values with a policy
    (a Flux HelmRelease's ``valuesFrom``); a key is one or the other."""
    values = tuple(key for key, value in data.items() if is_values_text(value))
    policies = tuple(key for key, value in data.items() if policy_key(key, value) and key not in values)
    return policies, values


def policy_key(key: Any, value: Any) -> bool:
    """Whether a ConfigMap data entry is meant to hold a policy: the chart's key, or text that names one."""
    if not isinstance(value, str):
        return False
    return key == CONFIGMAP_POLICY_KEY or "DeschedulerPolicy" in value or f"{POLICY_GROUP}/v1alpha" in value


def _container(doc: YMap) -> Shape:
    """The shape of a mapping document that is not a ``kind: List``."""
    kind = doc.get("kind")
    if "apiVersion" not in doc and _holds_policy(doc):
        return Shape.HELM
    if kind == "ConfigMap" and isinstance(doc.get("data"), YMap):
        return Shape.CONFIGMAP
    if kind == KUBEDESCHEDULER:
        return Shape.KUBEDESCHEDULER
    return Shape.POLICY if looks_like_policy(doc) else Shape.OTHER


def locate_policies(
    documents: Iterable[Any],
    *,
    raw_only: bool = False,
    flux: Collection[FluxSource] | None = None,
    umbrella: "Dependency | None" = None,
    values_file: bool = False,
) -> Iterator[Location]:
    """Every policy of a composed document stream, in order, with the documents that hold none (``other``; ``None``
    documents are skipped). ``raw_only`` (the text of a ConfigMap key) finds raw policies only. ``flux`` are the
    Flux sources of the descheduler chart known in the repository (default: those of the stream itself), through
    which a HelmRelease may name the chart; ``umbrella``, the descheduler dependency of the chart the stream is a
    values file of (:mod:`desched.gitops.umbrella`); ``values_file``: the stream is a values file a kustomize
    ``helmCharts`` entry hands the chart (:mod:`desched.gitops.helmcharts`), so that a mapping without ``apiVersion``
    is chart values whatever keys it holds. This is the one place that knows where policies live: lint, migrate and
    the webhook all read it."""
    documents = list(documents)
    if flux is None:
        flux = [
            found
            for doc in documents
            if isinstance(doc, dict) and is_flux_source_kind(doc.get("kind"))
            for found in flux_sources(doc)
        ]
    for index, doc in enumerate(documents):
        if umbrella is not None and isinstance(doc, YMap) and "apiVersion" not in doc:
            yield from _umbrella(doc, (index,), umbrella)
        elif values_file and isinstance(doc, YMap) and "apiVersion" not in doc and not _holds_policy(doc):
            values = _with_default_policy(doc, (doc.line, doc.column))
            yield Location(Shape.HELM, (index,), values, ())
        else:
            yield from _locate(doc, (index,), raw_only, flux)


def _umbrella(doc: YMap, path: Path, dependency: "Dependency") -> Iterator[Location]:
    """The values file of an umbrella chart: the descheduler's values under the dependency's key (when its
    condition leaves it on), and a ``deschedulerPolicy`` at the top, which never reaches the descheduler chart."""
    from desched.gitops.umbrella import enabled

    found = False
    values = doc.get(dependency.key)
    if _holds_policy(values) and enabled(dependency, doc):
        found = True
        label = f"umbrella chart {dependency.parent} ({dependency.source}, dependency {dependency.key})"
        yield Location(Shape.HELM, (*path, dependency.key), values, (), label, dependency.version, holder=doc)
    if _holds_policy(doc):
        found = True
        reason = (
            f"these values are umbrella chart {dependency.parent}'s own: Helm hands the descheduler chart only the "
            f"values under {dependency.key}: (the dependency's {'alias' if dependency.key != 'descheduler' else 'name'}"
            f" in {dependency.source}) and global, so this {HELM_POLICY_KEY} never reaches it; move it under "
            f"{dependency.key}:"
        )
        yield Location(Shape.HELM, path, doc, unreached=reason)
    if not found:
        yield Location(Shape.OTHER, path, doc)


def _locate(doc: Any, path: Path, raw_only: bool, flux: Collection[FluxSource]) -> Iterator[Location]:
    if not isinstance(doc, YMap):
        if doc is not None:
            yield Location(Shape.OTHER, path, doc)
        return
    if raw_only:
        yield Location(Shape.POLICY if looks_like_policy(doc) else Shape.OTHER, path, doc)
        return
    if doc.get("kind") == "List" and isinstance(doc.get("items"), YSeq):
        for index, item in enumerate(doc["items"]):
            yield from _locate(item, (*path, "items", index), raw_only, flux)
        return
    shape = _container(doc)
    if shape == Shape.OTHER:
        found = False
        for install in installs(doc, flux=flux):
            before = found
            for values in install_values(install):
                node = _at(doc, values.path)
                pin = locate(doc, values.version_path) if values.version_path else None
                if values.key is not None:
                    found = True
                    yield Location(
                        Shape.VALUES_TEXT, (*path, *values.path), node, (values.key,), values.wrapper,
                        values.version, pin=pin, holder=doc, source=(values.path, values.key),
                        unreached=values.unreached,
                    )  # fmt: skip
                elif _holds_policy(node):
                    found = True
                    yield Location(
                        Shape.HELM, (*path, *values.path), node, (), values.wrapper, values.version, pin=pin,
                        holder=doc, source=values.path, unreached=values.unreached,
                    )  # fmt: skip
            if found == before and renders_defaults_only(install):
                found = True
                yield _defaults_only(doc, path, install)
        if not found:
            yield Location(Shape.OTHER, path, doc)
        return
    if shape != Shape.CONFIGMAP:
        yield Location(shape, path, doc)
        return
    data = doc["data"]
    keys, values_keys = configmap_keys(data)
    if keys or not values_keys:
        yield Location(Shape.CONFIGMAP if keys else Shape.OTHER, path, doc, keys)
    if values_keys:
        label = object_label(doc, "ConfigMap")
        yield Location(Shape.VALUES_TEXT, (*path, "data"), data, values_keys, label, configmap=object_identity(doc))


def _defaults_only(doc: YMap, path: Path, install: Install) -> Location:
    """The chart values of a pinned install that sets no ``deschedulerPolicy``: its values (or none) with an empty
    one, which the chart fills with its default policy (:mod:`desched.deployment.chartrender`); placed at the version
    pin."""
    pin = locate(doc, install.version_path) if install.version_path else None
    inline = next((source.where for source in install.sources if source.kind == "inline"), None)
    written = _at(doc, inline) if inline is not None else None
    values = _with_default_policy(written if isinstance(written, YMap) else None, pin or (doc.line, doc.column))
    where = (*path, *inline) if inline is not None else path
    return Location(Shape.HELM, where, values, (), install.wrapper, install.version, pin=pin, holder=doc, source=inline)


def _with_default_policy(written: YMap | None, at: Position) -> YMap:
    """Chart values ``written`` (none: empty values placed ``at``), with an empty ``deschedulerPolicy`` placed ``at``:
    what the chart fills with its default policy."""
    values = YMap(*at)
    if written is not None:
        values = YMap(written.line, written.column)
        values.update(written)
        values.key_pos.update(written.key_pos)
        values.value_pos.update(written.value_pos)
        values.styles.update(written.styles)
    if HELM_POLICY_KEY not in values or values[HELM_POLICY_KEY] is not None:  # a null is kept: no policy at all
        values[HELM_POLICY_KEY] = YMap(*at)
        values.key_pos[HELM_POLICY_KEY] = values.value_pos[HELM_POLICY_KEY] = at
        values.styles[HELM_POLICY_KEY] = ""
    return values


def object_identity(doc: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """A Kubernetes object's (namespace, name); ``None`` without a name."""
    metadata = doc.get("metadata")
    metadata = mapping_or_empty(metadata)
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str):
        return None
    return namespace if isinstance(namespace, str) else None, name


def _at(doc: Any, path: Path) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _holds_policy(values: Any) -> bool:
    return isinstance(values, YMap) and isinstance(values.get(HELM_POLICY_KEY), YMap)


def extract(
    file: str,
    text: str,
    documents: list[Any] | None = None,
    budget: NodeBudget | None = None,
    flux: Collection[FluxSource] | None = None,
    umbrella: "Dependency | None" = None,
) -> Extraction:
    """Find every policy in ``text`` (composed already as ``documents``, if given), reading it and the YAML texts it
    holds on one node ``budget`` (default: a budget of its own); ``flux`` and ``umbrella`` as
    :func:`locate_policies` takes them. Raises :class:`~desched.reading.yamlsrc.YamlError` when the file is not YAML or
    holds more nodes."""
    result = Extraction(budget)
    holders: set[int] = set()
    documents = load_all(text, budget=result.budget) if documents is None else documents
    values_file = umbrella is None and _named_as_values(file, documents)
    for location in locate_policies(documents, flux=flux, umbrella=umbrella, values_file=values_file):
        node = location.node
        if location.holder is not None and id(location.holder) not in holders:
            holders.add(id(location.holder))  # its installs name the chart version and the values sources
            result.wrappers.append(location.holder)
        if location.shape == Shape.CONFIGMAP:
            found = [_configmap_policies(file, text, node, key, result) for key in location.keys]
            if not any(found):
                result.others.append(node)
        elif location.shape == Shape.HELM:
            policy = _helm_doc(file, node, location)
            if location.wrapper:
                policy.prefix = (*location.path[1:], HELM_POLICY_KEY)
            result.policies.append(policy)
        elif location.shape == Shape.VALUES_TEXT:
            for key in location.keys:
                _embedded_policies(file, text, node, key, location, result)
        elif location.shape == Shape.KUBEDESCHEDULER:
            label = object_label(node, KUBEDESCHEDULER)
            result.policies.append(
                PolicyDoc(file, node, node.get("apiVersion"), KUBEDESCHEDULER, Shape.KUBEDESCHEDULER, label, node)
            )
        elif location.shape == Shape.POLICY:
            label = object_label(node, "DeschedulerPolicy")
            result.policies.append(
                PolicyDoc(file, node, node.get("apiVersion"), node.get("kind"), Shape.POLICY, label, node)
            )
        else:
            result.others.append(node)
    return result


def _named_as_values(file: str, documents: list[Any]) -> bool:
    """Whether ``documents``, read from ``file``, are a values file of a kustomize ``helmCharts`` entry of the
    descheduler chart that sets no ``deschedulerPolicy``: a mapping without ``apiVersion`` the locator would not read
    as chart values alone. The file system is asked only then."""
    loose = any(isinstance(doc, YMap) and "apiVersion" not in doc and not _holds_policy(doc) for doc in documents)
    if not loose:
        return False
    from desched.gitops.helmcharts import is_values_file

    return is_values_file(file)


def _helm_doc(file: str, values: YMap, location: Location) -> PolicyDoc:
    """The policy of chart values ``values``; ``extra`` keeps what names its release (desched.deployment.releases): the
    image tag they set, the chart version and name of the wrapper that pins it."""
    image = values.get("image")
    tag = image.get("tag") if isinstance(image, dict) else None
    label = f"{location.wrapper}: values deschedulerPolicy" if location.wrapper else "Helm values deschedulerPolicy"
    policy = values[HELM_POLICY_KEY]
    if policy is None:  # deschedulerPolicy: null, which the chart renders (:mod:`desched.deployment.chartrender`)
        policy = YMap(*values.value_pos[HELM_POLICY_KEY])
    extra = {"image_tag": tag, "chart_version": location.hint, "wrapper": location.wrapper, "pin": location.pin}
    if location.unreached is not None:
        extra["unreached"] = location.unreached
    if location.source is not None:
        extra["install"] = (location.wrapper, location.source)  # which source of which install of the file
    return PolicyDoc(
        file, policy, _written_api_version(values, policy), "DeschedulerPolicy", Shape.HELM, label,
        values, extra=extra,
    )  # fmt: skip


def _written_api_version(values: YMap, policy: Any) -> Any:
    """The ``apiVersion`` chart ``values`` are read with as written: ``deschedulerPolicyAPIVersion``, else the shape
    the policy is written in (``strategies``: v1alpha1). A pinned chart renders them with the ``apiVersion`` its
    template writes instead (:mod:`desched.deployment.chartrender`, docs/helm-chart.md#12-the-apiversion-line)."""
    if HELM_VERSION_KEY in values:
        return values[HELM_VERSION_KEY]
    return f"{POLICY_GROUP}/v1alpha1" if "strategies" in policy else f"{POLICY_GROUP}/v1alpha2"


def _configmap_policies(file: str, text: str, cm: YMap, key: str, result: Extraction) -> bool:
    """Read the policies of one ConfigMap data key; True when it held one, or should have and does not parse."""
    owner = object_label(cm, "ConfigMap")
    parsed = _parse_embedded(file, text, cm["data"], key, owner, result)
    if parsed is None:
        return True
    docs, value_at, offsets = parsed
    identity = object_identity(cm)
    return _key_policies(file, owner, key, docs, result, value_at, offsets, (*identity, key) if identity else None)


def _parse_embedded(
    file: str, text: str, holder: YMap, key: str, owner: str, result: Extraction
) -> tuple[list[Any], Position, tuple[int, int] | None] | None:
    """The documents of the YAML text at ``holder[key]``, where the value starts, and the offsets that place a
    position inside a literal block in the file (``None`` otherwise); ``None`` (recorded as an
    :class:`EmbeddedError`) when the text is not YAML or holds more nodes than the file's budget has left."""
    line, column = holder.value_pos[key]
    offsets = block_offsets(text, line, column) if holder.styles.get(key, "") == "|" else None
    try:
        return load_all(holder[key], budget=result.budget), (line, column), offsets
    except YamlError as exc:
        at = (exc.line + offsets[0], exc.column + offsets[1]) if offsets else (line, column)
        result.errors.append(EmbeddedError(file, f"{owner} (key {key})", exc.message, *at))
        return None


def _embedded_policies(file: str, text: str, holder: YMap, key: str, location: Location, result: Extraction) -> None:
    """The policies of chart values written as YAML text at ``holder[key]``."""
    parsed = _parse_embedded(file, text, holder, key, location.wrapper or "values", result)
    if parsed is None:
        return
    docs, value_at, offsets = parsed
    wrapper = f"{location.wrapper} (key {key})" if location.wrapper else f"key {key}"
    for inner in locate_policies(docs):
        if inner.shape != Shape.HELM:
            continue
        policy = _helm_doc(file, inner.node, location._replace(wrapper=wrapper))
        if location.source is not None:
            policy.extra["install"] = (location.wrapper, location.source)
        if location.configmap is not None:
            policy.extra["values_from"] = (*location.configmap, key)
        result.policies.append(_placed(policy, value_at, offsets))


def _placed(policy: PolicyDoc, value_at: Position, offsets: tuple[int, int] | None) -> PolicyDoc:
    """``policy``, read from YAML text inside a value, placed in the file: by ``offsets`` inside a literal block,
    else every position at ``value_at``, where the value starts."""
    if offsets:
        policy.line_offset, policy.column_offset = offsets
    else:
        policy.fixed = value_at
    return policy


def extract_configmap_key(file: str, text: str, key: str, owner: str) -> Extraction:
    """The policies of the text of ConfigMap data key ``key`` on its own (``owner`` names the ConfigMap), with
    positions inside that text; raises :class:`~desched.reading.yamlsrc.YamlError` when it is not YAML."""
    result = Extraction()
    _key_policies(file, owner, key, load_all(text), result, (1, 1), (0, 0))
    return result


def _key_policies(
    file: str,
    owner: str,
    key: str,
    docs: list[Any],
    result: Extraction,
    value_at: Position,
    offsets: tuple[int, int] | None,
    identity: tuple[str | None, str, str] | None = None,
) -> bool:
    """The policies among the documents of a ConfigMap data key (raw ones only); ``offsets`` place a position inside
    the text in the outer file (None: every position is the value's, ``value_at``); ``identity`` is the ConfigMap's
    (namespace, name, key), kept as ``extra["configmap"]``. True when the key held a policy, or is the chart's key
    and holds something that is not a mapping."""
    found = False
    for location in locate_policies(docs, raw_only=True):
        inner = location.node
        if location.shape != Shape.POLICY:
            if key == CONFIGMAP_POLICY_KEY and not isinstance(inner, dict):
                label = f"{owner} (key {key})"
                result.errors.append(EmbeddedError(file, label, "policy is not a YAML mapping", *value_at))
                found = True
            continue
        found = True
        policy = PolicyDoc(
            file,
            inner,
            inner.get("apiVersion"),
            inner.get("kind"),
            Shape.CONFIGMAP,
            owner,
            inner,
            extra={"data_key": key, "configmap": identity},
        )
        result.policies.append(_placed(policy, value_at, offsets))
    return found


def block_offsets(text: str, header_line: int, header_column: int) -> tuple[int, int] | None:
    """Line and column offsets that map positions inside a literal block scalar to the outer file."""
    lines = _lines(text)
    if header_line > len(lines):
        return None
    header = lines[header_line - 1][header_column - 1 :]
    match = _BLOCK_HEADER().match(header)
    explicit = (match.group(1) or match.group(2)) if match else ""
    if explicit:
        parent = len(lines[header_line - 1]) - len(lines[header_line - 1].lstrip(" "))
        return header_line, parent + int(explicit)
    for body in lines[header_line:]:
        if body.strip():
            return header_line, len(body) - len(body.lstrip(" "))
    return None


@lru_cache(maxsize=2)
def _lines(text: str) -> tuple[str, ...]:
    """The lines of ``text``, split once for the many blocks of one file (a file of ConfigMaps: every key a block),
    not once for each."""
    return tuple(text.splitlines())
