"""Node helpers of the executor: readiness, taints, node affinity and NodeFit (docs/executor-semantics.md#12-one-cycle,
docs/executor-semantics.md#4-node-fit, docs/executor-semantics.md#74-taints-tolerations-and-selectors).

Nodes, pods, taints and tolerations are decoded JSON objects; absent and ``null`` fields read as Go's zero values.
Nothing here modifies its arguments. Resource amounts are in :func:`desched.executor.quantity.resource_value` units.

NodeFit (:func:`node_fit_failure`) runs upstream's checks in upstream's order and returns upstream's error text:

1. ``spec.unschedulable``;
2. ``spec.nodeSelector`` (every pair equal) and the required node affinity (:func:`node_selector_terms_match`);
3. every ``NoSchedule``/``NoExecute`` taint tolerated;
4. the pod's own required pod anti-affinity against the non-terminal pods on the node (``anti_affinity``: from
   v0.30 on; :mod:`desched.executor.releases`);
5. resources, only when the pod is not bound to the node: allocatable minus the requests of the node's non-terminal
   pods must cover each requested resource, and one pod slot must be left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache, partial
from typing import Any

from desched.executor.podutil import is_terminal, pod_requests
from desched.executor.quantity import resource_value
from desched.tree import JsonView
from desched.validation.labels import is_label_key, is_label_value
from desched.workloads.selectors import Selector, compile_selector, label_map

__all__ = [
    "PodFacts",
    "allocatable_amount",
    "best_preferred_weight",
    "fit_failure",
    "is_ready",
    "is_unschedulable",
    "node_allocatable",
    "node_fit_failure",
    "node_name",
    "node_requested",
    "node_selector_terms_match",
    "pod_fits_any_node",
    "pod_fits_any_other_node",
    "pod_matches_node",
    "pod_tolerates_taints",
    "preferred_weight",
    "tolerates",
    "tolerates_no_schedule_or_execute",
    "tolerations_tolerate_taints",
]

PodsByNode = Callable[[str], Sequence[JsonView]]
RequestedByNode = Callable[[str], Mapping[str, int]]

_EMPTY: Mapping[str, Any] = {}
_BASIC_RESOURCES = ("cpu", "memory", "pods")
_INT64_TEXT = re.compile(r"[+-]?[0-9]+")
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")
_MIN_INT64 = -(2**63)
_MAX_INT64 = 2**63 - 1


def _go_int64(text: Any) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; None when it fails."""
    if not isinstance(text, str) or _INT64_TEXT.fullmatch(text) is None:
        return None
    value = int(text)
    return value if _MIN_INT64 <= value <= _MAX_INT64 else None


def _canonical_int64(text: str) -> int | None:
    """``content.IsDecimalInteger`` then ``strconv.ParseInt``: no sign but ``-``, no leading zeros; None otherwise."""
    if _CANONICAL_INT.fullmatch(text) is None:
        return None
    value = int(text)
    return value if _MIN_INT64 <= value <= _MAX_INT64 else None


def node_name(obj: JsonView) -> str:
    """``metadata.name`` of an object (``""`` when absent)."""
    return str((obj.get("metadata") or _EMPTY).get("name") or "")


def _labels(obj: JsonView) -> Mapping[str, Any]:
    return (obj.get("metadata") or _EMPTY).get("labels") or _EMPTY


# --- node state -----------------------------------------------------------------------------------------------------


def is_ready(node: JsonView) -> bool:
    """False only when a ``Ready`` condition exists whose status is not ``True``; no condition counts as ready."""
    for condition in (node.get("status") or _EMPTY).get("conditions") or ():
        if condition.get("type") == "Ready" and condition.get("status") != "True":
            return False
    return True


def is_unschedulable(node: JsonView) -> bool:
    """``spec.unschedulable`` is true (cordoned)."""
    return bool((node.get("spec") or _EMPTY).get("unschedulable"))


def _resource_list(values: Mapping[str, Any]) -> dict[str, int]:
    return {name: 0 if value is None else resource_value(name, value) for name, value in values.items()}


def node_allocatable(node: JsonView) -> dict[str, int]:
    """``status.allocatable``, or ``status.capacity`` when allocatable is empty (node utilization's capacity)."""
    status = node.get("status") or _EMPTY
    return _resource_list(status.get("allocatable") or status.get("capacity") or _EMPTY)


def node_requested(
    pods_on_node: Iterable[JsonView], requests_of: Callable[[JsonView], Mapping[str, int]] = pod_requests
) -> dict[str, int]:
    """Σ :func:`pod_requests` (or ``requests_of``, which must agree) over the non-terminal pods, plus ``pods``: how
    many of them there are."""
    total: dict[str, int] = {}
    count = 0
    for pod in pods_on_node:
        if is_terminal(pod):
            continue
        count += 1
        for name, amount in requests_of(pod).items():
            total[name] = total.get(name, 0) + amount
    total["pods"] = count
    return total


# --- taints and tolerations (docs/executor-semantics.md#74-taints-tolerations-and-selectors) --------------------------


def tolerates(toleration: JsonView, taint: JsonView) -> bool:
    """``Toleration.ToleratesTaint`` with comparison operators on.

    Effect empty or equal; key empty or equal; operator ``Exists`` matches any value, ``Equal``/empty needs equal
    values, ``Lt``/``Gt`` compare taint value to toleration value as canonical decimal int64 (unparsable: no match);
    any other operator never matches.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return bool((toleration.get("value") or "") == (taint.get("value") or ""))
    if operator == "Exists":
        return True
    if operator in ("Lt", "Gt"):
        tolerated = _canonical_int64(str(toleration.get("value") or ""))
        if tolerated is None:
            return False
        actual = _canonical_int64(str(taint.get("value") or ""))
        if actual is None:
            return False
        return actual < tolerated if operator == "Lt" else actual > tolerated
    return False


def _tolerated(tolerations: Sequence[JsonView], taint: JsonView) -> bool:
    return any(tolerates(toleration, taint) for toleration in tolerations)


def tolerations_tolerate_taints(
    tolerations: Sequence[JsonView] | None,
    taints: Iterable[JsonView] | None,
    taint_filter: Callable[[JsonView], bool] | None = None,
) -> bool:
    """Every taint selected by ``taint_filter`` (None: all) is tolerated by at least one toleration."""
    tolerations = tolerations or ()
    for taint in taints or ():
        if taint_filter is not None and not taint_filter(taint):
            continue
        if not _tolerated(tolerations, taint):
            return False
    return True


def _no_schedule_or_execute(taint: JsonView) -> bool:
    return taint.get("effect") in ("NoSchedule", "NoExecute")


def _taints(node: JsonView) -> Sequence[JsonView]:
    return (node.get("spec") or _EMPTY).get("taints") or ()


def _tolerations(pod: JsonView) -> Sequence[JsonView]:
    return (pod.get("spec") or _EMPTY).get("tolerations") or ()


def tolerates_no_schedule_or_execute(pod: JsonView, node: JsonView) -> bool:
    """NodeFit step 3: every ``NoSchedule``/``NoExecute`` taint of ``node`` is tolerated by ``pod``."""
    return tolerations_tolerate_taints(_tolerations(pod), _taints(node), _no_schedule_or_execute)


def pod_tolerates_taints(pod: JsonView, taints_by_node: Mapping[str, Sequence[JsonView] | None]) -> bool:
    """``PodToleratesTaints``: some node has all its taints (every effect) tolerated; an empty map gives False.

    Quirk kept from upstream: a node with more taints than the pod has tolerations is rejected unexamined.
    """
    tolerations = _tolerations(pod)
    for taints in taints_by_node.values():
        taints = taints or ()
        if len(tolerations) >= len(taints) and tolerations_tolerate_taints(tolerations, taints):
            return True
    return False


# --- node selector terms --------------------------------------------------------------------------------------------

_LabelRequirement = tuple[str, str, frozenset[str], int]  # key, operator, values, Gt/Lt bound
_FieldRequirement = tuple[str, bool, str]  # key, equal (In) or not (NotIn), value


class _Term:
    """One parsed ``NodeSelectorTerm``; ``invalid`` when ``NewLazyErrorNodeSelector`` would record parse errors."""

    __slots__ = ("fields", "invalid", "labels")

    def __init__(
        self,
        labels: tuple[_LabelRequirement, ...] | None,
        fields: tuple[_FieldRequirement, ...] | None,
        invalid: bool,
    ) -> None:
        self.labels = labels
        self.fields = fields
        self.invalid = invalid

    def matches(self, node_labels: Mapping[str, Any], node_name: str) -> bool:
        if self.labels is not None:
            for key, operator, values, bound in self.labels:
                present = key in node_labels
                if operator == "In":
                    if not present or node_labels[key] not in values:
                        return False
                elif operator == "NotIn":
                    if present and node_labels[key] in values:
                        return False
                elif operator == "Exists":
                    if not present:
                        return False
                elif operator == "DoesNotExist":
                    if present:
                        return False
                else:  # Gt, Lt
                    if not present:
                        return False
                    value = _go_int64(node_labels[key])
                    if value is None or not (value > bound if operator == "Gt" else value < bound):
                        return False
        if self.fields is not None and node_name:
            for key, equal, expected in self.fields:
                actual = node_name if key == "metadata.name" else ""
                if (actual == expected) != equal:
                    return False
        return True


@lru_cache(maxsize=4096)
def _valid_label_key(key: str) -> bool:
    return not is_label_key(key)


@lru_cache(maxsize=4096)
def _valid_label_value(value: str) -> bool:
    return not is_label_value(value)


def _label_requirement(expression: Any) -> _LabelRequirement | None:
    """``labels.NewRequirement`` for a node selector requirement; None when it reports an error."""
    if not isinstance(expression, Mapping):
        return None
    key = expression.get("key") or ""
    operator = expression.get("operator") or ""
    values = expression.get("values") or []
    if not isinstance(key, str) or not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    if not _valid_label_key(key) or not all(_valid_label_value(value) for value in values):
        return None
    bound = 0
    if operator in ("In", "NotIn"):
        if not values:
            return None
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            return None
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            return None
        parsed = _go_int64(values[0])
        if parsed is None:
            return None
        bound = parsed
    else:
        return None
    return key, operator, frozenset(values), bound


def _field_requirement(expression: Any) -> _FieldRequirement | None:
    """``nodeSelectorRequirementsAsFieldSelector`` for one requirement: In/NotIn with exactly one value."""
    if not isinstance(expression, Mapping):
        return None
    operator = expression.get("operator")
    values = expression.get("values") or []
    if operator not in ("In", "NotIn") or not isinstance(values, list) or len(values) != 1:
        return None
    if not isinstance(values[0], str):
        return None
    return str(expression.get("key") or ""), operator == "In", values[0]


def _compile_term(term: Any) -> _Term | None:
    """The parsed term; None for a nil or empty term (it selects nothing and is skipped)."""
    if not isinstance(term, Mapping):
        return None
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return None
    invalid = False
    label_requirements: tuple[_LabelRequirement, ...] | None = None
    field_requirements: tuple[_FieldRequirement, ...] | None = None
    if expressions:
        parsed_labels = [_label_requirement(expression) for expression in expressions]
        if any(requirement is None for requirement in parsed_labels):
            invalid = True
        else:
            label_requirements = tuple(requirement for requirement in parsed_labels if requirement is not None)
    if fields:
        parsed_fields = [_field_requirement(expression) for expression in fields]
        if any(requirement is None for requirement in parsed_fields):
            invalid = True
        else:
            field_requirements = tuple(requirement for requirement in parsed_fields if requirement is not None)
    return _Term(label_requirements, field_requirements, invalid)


def _compile_terms(terms: Any) -> list[_Term]:
    compiled = []
    for term in terms or ():
        parsed = _compile_term(term)
        if parsed is not None:
            compiled.append(parsed)
    return compiled


def _match_compiled(terms: Sequence[_Term], node: JsonView) -> tuple[bool, bool]:
    """``LazyErrorNodeSelector.Match``: (matched, some unmatched term had parse errors)."""
    labels = _labels(node)
    name = node_name(node)
    errors = False
    for term in terms:
        if term.invalid:
            errors = True
            continue
        if term.matches(labels, name):
            return True, False
    return False, errors


def node_selector_terms_match(terms: Sequence[JsonView] | None, node: JsonView) -> bool:
    """Required node affinity: terms ORed, requirements inside a term ANDed.

    ``matchExpressions`` use In, NotIn, Exists, DoesNotExist, Gt, Lt (int64 compare; a label that is not an integer
    does not match); ``matchFields`` use In/NotIn with one value against ``metadata.name`` (other keys read as
    ``""``). An empty term, or an empty list, matches nothing; a term with a parse error never matches.
    """
    return _match_compiled(_compile_terms(terms), node)[0]


def _node_affinity(pod: JsonView) -> Mapping[str, Any]:
    affinity = (pod.get("spec") or _EMPTY).get("affinity") or _EMPTY
    return affinity.get("nodeAffinity") or _EMPTY


def _required_terms(pod: JsonView) -> list[_Term] | None:
    """The parsed required node affinity terms; None when the pod has no required node affinity at all."""
    required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    return _compile_terms(required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None)


def _node_selector(pod: JsonView) -> tuple[tuple[str, str], ...]:
    selector = (pod.get("spec") or _EMPTY).get("nodeSelector") or _EMPTY
    return tuple((str(key), "" if value is None else str(value)) for key, value in selector.items())


_INVALID_TERM = "pod node affinity has an invalid node selector term"


def _selector_failure(
    node_selector: tuple[tuple[str, str], ...], required: list[_Term] | None, node: JsonView
) -> str | None:
    labels = _labels(node)
    for key, value in node_selector:
        if key not in labels or labels[key] != value:
            return "pod node selector does not match the node label"
    if required is not None:
        matched, errors = _match_compiled(required, node)
        if not matched:
            if errors:
                return _INVALID_TERM
            return "pod node selector does not match the node label"
    return None


def pod_matches_node(pod: JsonView, node: JsonView) -> bool:
    """``PodMatchNodeSelector``: ``spec.nodeSelector`` pairs all equal AND the required node affinity matches."""
    return _selector_failure(_node_selector(pod), _required_terms(pod), node) is None


def pod_selection_excludes_node(pod: JsonView, node: JsonView) -> bool:
    """Whether ``PodMatchNodeSelector`` says "no match" *without an error*: callers that skip a node only then
    (RemoveDuplicates' target nodes) keep nodes whose affinity terms fail to parse."""
    failure = _selector_failure(_node_selector(pod), _required_terms(pod), node)
    return failure is not None and failure != _INVALID_TERM


def preferred_weight(pod: JsonView, node: JsonView) -> int:
    """Σ weights of the pod's preferred node affinity terms matching ``node`` (invalid or empty terms add 0)."""
    total = 0
    for preferred in _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") or ():
        term = _compile_term(preferred.get("preference"))
        if term is not None and not term.invalid and term.matches(_labels(node), node_name(node)):
            total += int(preferred.get("weight") or 0)
    return total


def best_preferred_weight(pod: JsonView, nodes: Iterable[JsonView]) -> int:
    """The largest :func:`preferred_weight` over ``nodes``, at least 0."""
    return max((preferred_weight(pod, node) for node in nodes), default=0)


# --- NodeFit (docs/executor-semantics.md#4-node-fit) ------------------------------------------------------------------

_AntiTerm = tuple[frozenset[str], Selector, str]


#: signature -> (the signature, node selector pairs, required node affinity terms) of the pods with that signature
#: (:class:`PodFacts`): equal signatures hold equal selectors, whose pairs' order decides no answer
SharedTerms = dict[str, tuple[str, tuple[tuple[str, str], ...], list[_Term] | None]]


class PodFacts:
    """What NodeFit needs from one pod, parsed once and reused across candidate nodes. ``compiled``
    (:data:`SharedTerms`) lets pods of one :attr:`signature` share it, their selector and their terms, compiled
    once."""

    __slots__ = (
        "_requests",
        "_signature",
        "anti_terms",
        "name",
        "node_name",
        "node_selector",
        "pod",
        "required",
        "tolerations",
    )

    def __init__(
        self,
        pod: JsonView,
        requests: Mapping[str, int] | None = None,
        compiled: SharedTerms | None = None,
    ) -> None:
        metadata = pod.get("metadata") or _EMPTY
        spec = pod.get("spec") or _EMPTY
        self.pod = pod
        self.name = str(metadata.get("name") or "")
        self.node_name = str(spec.get("nodeName") or "")
        self.node_selector = _node_selector(pod)
        self._signature: str | None = None
        if compiled is None:
            self.required = _required_terms(pod)
        else:
            shared = compiled.get(self.signature)
            if shared is None:
                shared = compiled[self.signature] = (self.signature, self.node_selector, _required_terms(pod))
            self._signature, self.node_selector, self.required = shared  # one of each per signature
        self.tolerations: Sequence[JsonView] = spec.get("tolerations") or ()
        self.anti_terms = _anti_terms(pod)
        self._requests = requests  # pod_requests(pod), when the caller knows them already

    @property
    def signature(self) -> str:
        """What :func:`static_fit_failure` reads of the pod (node selector, required node affinity, tolerations):
        pods with equal signatures pass it on the same nodes."""
        if self._signature is None:
            spec = self.pod.get("spec") or _EMPTY
            required = _node_affinity(self.pod).get("requiredDuringSchedulingIgnoredDuringExecution")
            self._signature = json.dumps([spec.get("nodeSelector"), required, spec.get("tolerations")], sort_keys=True)
        return self._signature

    @property
    def requests(self) -> Mapping[str, int]:
        if self._requests is None:
            self._requests = pod_requests(self.pod)
        return self._requests


def _anti_terms(pod: JsonView) -> list[_AntiTerm] | None:
    """Required pod anti-affinity terms (namespaces, compiled selector, topology key); None without anti-affinity."""
    affinity = (pod.get("spec") or _EMPTY).get("affinity") or _EMPTY
    anti = affinity.get("podAntiAffinity")
    if anti is None:
        return None
    own_namespace = str((pod.get("metadata") or _EMPTY).get("namespace") or "")
    terms: list[_AntiTerm] = []
    for term in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
        namespaces = frozenset(str(name) for name in term.get("namespaces") or ()) or frozenset((own_namespace,))
        selector = compile_selector(term.get("labelSelector"), nil_matches=False)
        terms.append((namespaces, selector, str(term.get("topologyKey") or "")))
    return terms


def _anti_affinity_failure(
    facts: PodFacts, node: JsonView, pods_on_node: Callable[[], Sequence[JsonView]]
) -> str | None:
    if not facts.anti_terms:
        return None
    node_labels = _labels(node)
    others: list[tuple[str, Mapping[str, str]]] | None = None
    for namespaces, selector, topology_key in facts.anti_terms:
        if selector.kind == "invalid":
            return "pod anti-affinity has an invalid label selector"
        if topology_key not in node_labels:
            continue  # upstream only fails when the node carries the key; matching pods cannot change that
        if others is None:
            others = []
            for other in pods_on_node():
                if is_terminal(other):
                    continue
                metadata = other.get("metadata") or _EMPTY
                if str(metadata.get("name") or "") == facts.name:
                    continue
                others.append((str(metadata.get("namespace") or ""), label_map(metadata.get("labels"))))
        for namespace, labels in others:
            if namespace in namespaces and selector.matches(labels):
                return "pod matches inter-pod anti-affinity rule of other pod on node"
    return None


def allocatable_amount(allocatable: Mapping[str, Any], name: str) -> int:
    """Resource ``name`` of a node's ``status.allocatable`` as NodeFit reads it: 0 when absent. Nodes repeat the
    same few amounts, so strings are parsed once."""
    raw = allocatable.get(name)
    if raw is None:
        return 0
    return _parsed_amount(name, raw) if isinstance(raw, str) else resource_value(name, raw)


@lru_cache(maxsize=4096)
def _parsed_amount(name: str, raw: str) -> int:
    return resource_value(name, raw)


def _resource_failure(
    facts: PodFacts,
    node: JsonView,
    pods_on_node: Callable[[], Sequence[JsonView]],
    requested: Callable[[], Mapping[str, int]] | None,
) -> str | None:
    requests = facts.requests
    used = requested() if requested is not None else node_requested(pods_on_node())
    allocatable = (node.get("status") or _EMPTY).get("allocatable") or _EMPTY
    available_pods = 0
    for name in ("pods", *requests):
        if name in _BASIC_RESOURCES or name in allocatable:
            available = allocatable_amount(allocatable, name) - used.get(name, 0)
        else:
            available = 0
        if name == "pods":
            available_pods = available
        if requests.get(name, 0) > available:
            return f"insufficient {name}"
    if available_pods <= 0:
        return "insufficient pods"
    return None


def fit_failure(
    facts: PodFacts,
    node: JsonView,
    pods_on_node: Callable[[], Sequence[JsonView]],
    requested: Callable[[], Mapping[str, int]] | None,
    *,
    anti_affinity: bool = True,
) -> str | None:
    """:func:`node_fit_failure` for a pod parsed once (``facts``), the node's pods and their requests on demand."""
    return static_fit_failure(facts, node) or dynamic_fit_failure(
        facts, node, pods_on_node, requested, anti_affinity=anti_affinity
    )


def static_fit_failure(facts: PodFacts, node: JsonView) -> str | None:
    """The checks of :func:`fit_failure` that read only the node and the pod's :attr:`PodFacts.signature`
    (cordon, node selector and required affinity, taints): nothing a cycle changes."""
    if is_unschedulable(node):
        return "node is not schedulable"
    failure = _selector_failure(facts.node_selector, facts.required, node)
    if failure is not None:
        return failure
    if not tolerations_tolerate_taints(facts.tolerations, _taints(node), _no_schedule_or_execute):
        return "pod does not tolerate taints on the node"
    return None


def dynamic_fit_failure(
    facts: PodFacts,
    node: JsonView,
    pods_on_node: Callable[[], Sequence[JsonView]],
    requested: Callable[[], Mapping[str, int]] | None,
    *,
    anti_affinity: bool = True,
) -> str | None:
    """The checks of :func:`fit_failure` that read the node's pods (anti-affinity, when ``anti_affinity``, and
    resources), after :func:`static_fit_failure` passed."""
    if anti_affinity:
        failure = _anti_affinity_failure(facts, node, pods_on_node)
        if failure is not None:
            return failure
    if not facts.node_name or facts.node_name != node_name(node):
        return _resource_failure(facts, node, pods_on_node, requested)
    return None


def node_fit_failure(
    pod: JsonView,
    node: JsonView,
    pods_on_node: Sequence[JsonView],
    *,
    requested: Mapping[str, int] | None = None,
    anti_affinity: bool = True,
) -> str | None:
    """``NodeFit``: None when ``pod`` fits ``node``, else upstream's reason (e.g. ``insufficient cpu``).
    ``anti_affinity`` says whether the pod's required pod anti-affinity is checked (releases from v0.30 on).

    ``pods_on_node`` are all pods bound to ``node`` (any phase; terminal ones are ignored). ``requested``, when
    given, must equal :func:`node_requested` of those pods; it only saves recomputing the sum.

    Resources (only when ``pod`` is not bound to ``node``): the names are ``pods`` plus every key of
    :func:`pod_requests`; available = ``status.allocatable`` (no capacity fallback) minus the non-terminal pods'
    requests, where cpu/memory/pods missing from allocatable count as 0 allocatable and any other missing resource
    as 0 available. Fails when a request exceeds what is available or no pod slot is left.
    """
    return fit_failure(
        PodFacts(pod),
        node,
        lambda: pods_on_node,
        None if requested is None else lambda: requested,
        anti_affinity=anti_affinity,
    )


def _fits_any(
    pod: JsonView,
    nodes: Iterable[JsonView],
    pods_by_node: PodsByNode,
    requested_by_node: RequestedByNode | None,
    skip_own: bool,
    anti_affinity: bool,
    requests: Mapping[str, int] | None,
) -> bool:
    facts = PodFacts(pod, requests)
    for node in nodes:
        name = node_name(node)
        if skip_own and facts.node_name == name:
            continue

        requested = None if requested_by_node is None else partial(requested_by_node, name)
        if fit_failure(facts, node, partial(pods_by_node, name), requested, anti_affinity=anti_affinity) is None:
            return True
    return False


def pod_fits_any_node(
    pod: JsonView,
    nodes: Iterable[JsonView],
    pods_by_node: PodsByNode,
    *,
    requested_by_node: RequestedByNode | None = None,
    anti_affinity: bool = True,
    requests: Mapping[str, int] | None = None,
) -> bool:
    """``PodFitsAnyNode``: NodeFit passes on some node of ``nodes``, the pod's own node included.

    ``pods_by_node(name)`` lists the pods bound to a node (any phase), and is only called when a check needs them.
    ``requested_by_node(name)``, if given, returns :func:`node_requested` of those pods. ``anti_affinity``: as
    :func:`node_fit_failure`; ``requests``, if given, replaces :func:`pod_requests` of ``pod`` (both computed alike).
    """
    return _fits_any(pod, nodes, pods_by_node, requested_by_node, False, anti_affinity, requests)


def pod_fits_any_other_node(
    pod: JsonView,
    nodes: Iterable[JsonView],
    pods_by_node: PodsByNode,
    *,
    requested_by_node: RequestedByNode | None = None,
    anti_affinity: bool = True,
    requests: Mapping[str, int] | None = None,
) -> bool:
    """``PodFitsAnyOtherNode``: as :func:`pod_fits_any_node`, leaving out the node named by ``spec.nodeName``."""
    return _fits_any(pod, nodes, pods_by_node, requested_by_node, True, anti_affinity, requests)
