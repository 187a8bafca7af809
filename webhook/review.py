"""The admission decision, independent of HTTP: one ``AdmissionRequest`` in, one ``AdmissionResponse`` out.

Contract:
* :func:`parse_review` turns a request body into an ``admission.k8s.io/v1`` ``AdmissionReview``'s ``request`` or
  raises :class:`BadReview` with a message for a 400 answer.
* :func:`decide` runs the same rules as ``desched lint`` on the object the API server sends:
  - a ConfigMap holding a DeschedulerPolicy (any data key), a ``KubeDescheduler``: every finding of severity error
    denies in ``enforce`` mode, the others come back as ``warnings``; ConfigMaps without a policy are allowed at once;
  - Deployments, StatefulSets, ReplicaSets, ReplicationControllers, Jobs and PDBs: the workload-safety rules
    (DS401-DS406) against the active policy and the cached cluster objects (:class:`Cluster` view), as warnings, or
    denials for the rules listed in ``deny_rules``; a PDB change or deletion that leaves an evictable workload without
    protection is reported as a warning; an update of the active policy ConfigMap is checked against the cached
    workloads too (warnings only);
  - ``warn`` mode never denies; the annotation ``desched.io/skip-validation: <reason>`` skips validation (with a
    warning saying so); DELETE and other operations are allowed at once. ``dryRun`` requests are decided the same way.
* :class:`DecisionCache` answers a policy object it has already decided (same kind, operation and object) without
  running the rules again; decisions that read the cluster cache are never cached.
* Locations: for a ConfigMap, ``data[<key>]:<line>:<column>`` inside the embedded policy; otherwise line and column in
  the object rendered as YAML in the order it was received.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any, NamedTuple, Protocol

import yaml

from desched.linter.engine import FileResult, Settings, lint_repository, lint_text
from desched.linter.finding import Finding
from desched.yamlsrc import YMap

Json = dict[str, Any]
SKIP_ANNOTATION = "desched.io/skip-validation"
WORKLOAD_RULES = ("DS401", "DS402", "DS403", "DS404", "DS405", "DS406")
POLICY_KINDS = ("ConfigMap", "KubeDescheduler")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Job")
MAX_MESSAGES = 10
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter: the same YAML, several times faster
MAX_WARNING = 240


class BadReview(Exception):
    """The body is not a usable AdmissionReview; the message says why (HTTP 400)."""


class Decision(NamedTuple):
    uid: str
    allowed: bool
    message: str
    warnings: list[str]
    rules: list[str]
    kind: str
    cached: bool = False  # answered by a DecisionCache


class ClusterView(Protocol):
    """What the workload checks need from the cluster cache."""

    def policy(self) -> FileResult | None: ...

    def objects(self) -> list[Json]: ...

    def is_active_policy(self, namespace: str, name: str) -> bool: ...


class Options(NamedTuple):
    mode: str = "enforce"
    deny_rules: frozenset[str] = frozenset()
    settings: Settings | None = None


def parse_review(body: bytes) -> Json:
    """The ``request`` of an AdmissionReview v1 body (see the module contract)."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadReview(f"the body is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise BadReview("the body is not a JSON object")
    if document.get("kind") != "AdmissionReview" or document.get("apiVersion") != "admission.k8s.io/v1":
        raise BadReview("expected an AdmissionReview of apiVersion admission.k8s.io/v1")
    request = document.get("request")
    if not isinstance(request, dict):
        raise BadReview("the AdmissionReview has no request")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        raise BadReview("request.uid is missing")
    if not isinstance(request.get("kind"), dict) or not isinstance(request.get("operation"), str):
        raise BadReview("request.kind and request.operation are required")
    for field in ("object", "oldObject"):
        if request.get(field) is not None and not isinstance(request[field], dict):
            raise BadReview(f"request.{field} must be an object")
    return request


def response(decision: Decision) -> Json:
    """The AdmissionReview v1 answering ``decision``."""
    answer: Json = {"uid": decision.uid, "allowed": decision.allowed}
    if not decision.allowed:
        answer["status"] = {"code": 403, "reason": "Forbidden", "message": decision.message}
    if decision.warnings:
        answer["warnings"] = decision.warnings
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer}


def decide(request: Json, options: Options, cluster: ClusterView | None = None) -> Decision:
    """The decision on one admission request (see the module contract)."""
    uid = str(request["uid"])
    kind = str(_mapping(request["kind"]).get("kind", ""))
    operation = request["operation"]
    obj = request.get("object") if isinstance(request.get("object"), dict) else None
    old = request.get("oldObject") if isinstance(request.get("oldObject"), dict) else None
    if kind == "PodDisruptionBudget" and operation in ("CREATE", "UPDATE", "DELETE"):
        return _pdb(uid, kind, operation, obj, old, options, cluster)
    if operation not in ("CREATE", "UPDATE") or obj is None:
        return Decision(uid, True, "", [], [], kind)
    skipped = _skip(uid, kind, obj)
    if skipped is not None:
        return skipped
    if kind == "ConfigMap":
        return _policy_object(uid, kind, obj, options, cluster, configmap=True)
    if kind == "KubeDescheduler":
        return _policy_object(uid, kind, obj, options, cluster, configmap=False)
    if kind in WORKLOAD_KINDS:
        return _workload(uid, kind, obj, options, cluster)
    return Decision(uid, True, "", [], [], kind)


def _mapping(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _skip(uid: str, kind: str, obj: Json) -> Decision | None:
    annotations = _mapping(_mapping(obj.get("metadata")).get("annotations"))
    if SKIP_ANNOTATION not in annotations:
        return None
    reason = str(annotations[SKIP_ANNOTATION]).strip()
    if not reason:
        return None  # an opt-out must say why; without a reason it is not honoured (and the rules still run)
    return Decision(
        uid, True, "", [f"desched validation skipped ({SKIP_ANNOTATION}: {reason})"[:MAX_WARNING]], [], kind
    )


def _settings(options: Options, only: Sequence[str] | None = None) -> Settings:
    base = options.settings or Settings()
    if only is None:
        return base
    from desched.linter import rules

    disabled = {module.ID for module in rules.all_rules()} - set(only)
    return Settings(
        target=base.target,
        disabled=disabled | base.disabled,
        severities=dict(base.severities),
        options=dict(base.options),
    )


def reads_cluster(request: Json, cluster: ClusterView | None) -> bool:
    """Whether a policy object's decision reads the cluster cache: it is the active policy ConfigMap, whose update is
    also checked against every cached workload."""
    if cluster is None or _mapping(request["kind"]).get("kind") != "ConfigMap":
        return False
    return cluster.is_active_policy(*_namespaced_name(_mapping(request.get("object") or request.get("oldObject"))))


def _namespaced_name(obj: Json) -> tuple[str, str]:
    metadata = _mapping(obj.get("metadata"))
    return str(metadata.get("namespace") or "default"), str(metadata.get("name") or "")


class DecisionCache:
    """Decisions on policy objects by content, least recently used first out (``size`` entries; thread-safe).

    GitOps controllers send the same object again and again (Flux's server-side dry-run drift checks, a dry run and
    then the apply); the decision depends only on the kind, the operation, the object (of a ConfigMap, the parts
    :func:`_decision_input` names) and the options, so those are answered from here with the new uid. The key is
    order-sensitive, as locations follow the received order.
    Objects whose decision reads the cluster cache (the active policy ConfigMap) are decided every time.
    """

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, Decision] = OrderedDict()
        self._lock = threading.Lock()

    def decide(self, request: Json, options: Options, cluster: ClusterView | None = None) -> Decision:
        """:func:`decide`, from the cache when this object was decided before."""
        key = self._key(request, cluster)
        if key is None:
            return decide(request, options, cluster)
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                self._entries.move_to_end(key)
                return known._replace(uid=str(request["uid"]), cached=True)
        decision = decide(request, options, cluster)
        with self._lock:
            self._entries[key] = decision
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return decision

    @staticmethod
    def _key(request: Json, cluster: ClusterView | None) -> bytes | None:
        kind = _mapping(request["kind"]).get("kind")
        obj = request.get("object")
        if (
            kind not in POLICY_KINDS
            or request["operation"] not in ("CREATE", "UPDATE")
            or not isinstance(obj, dict)
            or reads_cluster(request, cluster)
        ):
            return None
        content = json.dumps([kind, request["operation"], _decision_input(kind, obj)], separators=(",", ":"))
        return hashlib.blake2b(content.encode(), digest_size=16).digest()


def _decision_input(kind: str, obj: Json) -> Any:
    """What of a policy object its decision reads: a KubeDescheduler is rendered whole; of a ConfigMap, only what
    :func:`render_configmap` renders and the opt-out annotation count (labels, managedFields, the kubectl
    last-applied annotation and the like, often larger than the policy, neither change the decision nor the key)."""
    if kind != "ConfigMap":
        return obj
    annotations = _mapping(_mapping(obj.get("metadata")).get("annotations"))
    return [_envelope(obj), [annotations[SKIP_ANNOTATION]] if SKIP_ANNOTATION in annotations else [], obj.get("data")]


# --- policies -----------------------------------------------------------------------------------------------------


def _policy_object(
    uid: str, kind: str, obj: Json, options: Options, cluster: ClusterView | None, configmap: bool
) -> Decision:
    namespace, short = _namespaced_name(obj)
    name = f"{namespace}/{short}"
    rendering = render_configmap(obj) if configmap else render_object(obj)
    settings = _settings(options)
    result = lint_text(f"{kind} {name}", rendering.text, settings, documents=rendering.documents)
    if configmap and not result.policies and not result.findings:
        return Decision(uid, True, "", [], [], kind)  # not a policy ConfigMap
    findings = [f for f in result.findings + lint_repository([result], settings) if f.suppressed is None]
    warnings: list[str] = []
    if configmap and cluster is not None and cluster.is_active_policy(namespace, short) and result.policies:
        warnings += _workload_warnings_for_policy(result, options, cluster)
    return _verdict(uid, kind, findings, rendering.locate, options, warnings, deny=lambda f: f.severity == "error")


def _verdict(
    uid: str,
    kind: str,
    findings: list[Finding],
    locate: Callable[[int, int], str],
    options: Options,
    extra_warnings: list[str],
    deny: Callable[[Finding], bool],
) -> Decision:
    denying = [f for f in findings if deny(f)] if options.mode == "enforce" else []
    warning_findings = [f for f in findings if f not in denying]
    warnings = [_line(f, locate) for f in warning_findings] + extra_warnings
    rules = sorted({f.rule for f in findings})
    if not denying:
        return Decision(uid, True, "", [w[:MAX_WARNING] for w in warnings], rules, kind)
    shown = "; ".join(_line(f, locate) for f in denying[:MAX_MESSAGES])
    more = f"; and {len(denying) - MAX_MESSAGES} more" if len(denying) > MAX_MESSAGES else ""
    message = f"desched: {len(denying)} error{'s' if len(denying) != 1 else ''}: {shown}{more}"
    return Decision(uid, False, message, [w[:MAX_WARNING] for w in warnings], rules, kind)


def _line(finding: Finding, locate: Callable[[int, int], str]) -> str:
    return f"{finding.rule} {locate(finding.line, finding.column)}: {finding.message}"


class Rendering(NamedTuple):
    """An object as YAML text, a locator of ``line:column`` positions in it, and, when built along with the text,
    the documents exactly as :func:`desched.yamlsrc.load_all` composes that text (``None``: parse the text)."""

    text: str
    locate: Callable[[int, int], str]
    documents: list[Any] | None = None


def render_object(obj: Json) -> Rendering:
    """``obj`` as YAML in the order received (positions are ``line:column`` in that rendering)."""
    text = yaml.dump(obj, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return Rendering(text, lambda line, column: f"{line}:{column}")


def render_configmap(obj: Json) -> Rendering:
    """A ConfigMap as YAML with each string data value as a block scalar, and a locator that turns a position inside
    a value into ``data[<key>]:<line>:<column>`` of that value (other positions: ``<line>:<column>``).

    Of the envelope only what linting a ConfigMap reads is rendered (apiVersion, kind, metadata name and namespace,
    each on one line): labels, annotations and managedFields, often larger than the policy, are never parsed. When
    the envelope holds only strings and ``data`` maps strings to strings (what the API server admits), the document
    is composed along with the text, so only the policies inside are parsed."""
    data = obj.get("data")
    envelope = _envelope(obj)
    lines = [f"{key}: {_quoted(value)}" for key, value in envelope.items()]
    root = _envelope_document(envelope) if isinstance(data, dict) and data else None
    spans: list[tuple[int, int, str]] = []  # (first line, last line, key), 1-based lines of the value's content
    if isinstance(data, dict):
        lines.append("data:")
        for key, value in data.items():
            key_text = _quoted(str(key))
            if not isinstance(value, str) or not _block_safe(value):
                lines.append(f"  {key_text}: {_quoted(value)}")
                root = None  # composed directly only when every value is a block scalar
                continue
            body = value.split("\n")
            trailing = len(value) - len(value.rstrip("\n"))
            chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
            content = body[: len(body) - 1] if value.endswith("\n") else body
            lines.append(f"  {key_text}: |2{chomp}")
            if root is not None:  # `  "key": |2-`: the key at column 3, the block scalar after `: `
                _put(root["data"], str(key), value, (len(lines), 3), (len(lines), 3 + len(key_text) + 2), "|")
            first = len(lines) + 1
            lines.extend(f"    {line}" if line else "" for line in content)
            spans.append((first, len(lines), str(key)))
    text = "\n".join(lines) + "\n"

    def locate(line: int, column: int) -> str:
        for first, last, key in spans:
            if first <= line <= last:
                return f"data[{key}]:{line - first + 1}:{max(column - 4, 1)}"
        return f"{line}:{column}"

    return Rendering(text, locate, [root] if root is not None else None)


def _envelope(obj: Json) -> Json:
    """What :func:`render_configmap` renders of a ConfigMap besides its data: apiVersion, kind, name, namespace."""
    metadata = _mapping(obj.get("metadata"))
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {key: metadata[key] for key in ("name", "namespace") if key in metadata},
    }


def _envelope_document(envelope: Json) -> YMap | None:
    """The rendering's document up to ``data`` (whose entries the caller adds), composed directly; None unless the
    envelope holds only strings."""
    metadata = envelope["metadata"]
    if not (
        isinstance(envelope["apiVersion"], str)
        and isinstance(envelope["kind"], str)
        and all(isinstance(value, str) for value in metadata.values())
    ):
        return None
    root = YMap(1, 1)
    for line, key in ((1, "apiVersion"), (2, "kind")):  # `apiVersion: "v1"`
        _put(root, key, envelope[key], (line, 1), (line, len(key) + 3), '"')
    flow = YMap(3, 11)  # `metadata: {"name": "...", "namespace": "..."}`
    column = 12
    for key, value in metadata.items():
        at = column + len(_quoted(key)) + 2
        _put(flow, key, value, (3, column), (3, at), '"')
        column = at + len(_quoted(value)) + 2
    _put(root, "metadata", flow, (3, 1), (3, 11), "")
    _put(root, "data", YMap(5, 3), (4, 1), (5, 3), "")  # a block mapping starts at its first key
    root.nested_duplicates = 0
    return root


def _quoted(value: Any) -> str:
    """``value`` in JSON, which is YAML flow style, in ASCII: YAML takes neither surrogate pairs nor a raw DEL, so
    every character beyond ``~`` is a YAML escape (``\\u`` or, beyond U+FFFF, ``\\U``)."""
    text = encode_basestring_ascii(value) if isinstance(value, str) else json.dumps(value)
    if "\\ud" not in text and "\x7f" not in text:  # no surrogate pair, no raw DEL
        return text
    return _BEYOND_ASCII.sub(_escape, json.dumps(value, ensure_ascii=False))


_BEYOND_ASCII = re.compile(r"[^\x00-\x7e]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _put(node: YMap, key: str, value: Any, key_pos: tuple[int, int], value_pos: tuple[int, int], style: str) -> None:
    node[key] = value
    node.key_pos[key] = key_pos
    node.value_pos[key] = value_pos
    node.styles[key] = style


def _block_safe(value: str) -> bool:
    """Whether ``value`` survives a literal block scalar unchanged (printable, no carriage returns or BOM)."""
    return value.replace("\n", "").replace("\t", "").isprintable()  # a BOM (U+FEFF, format) is not printable


# --- workloads and PDBs -----------------------------------------------------------------------------------------


def _object_key(obj: Json) -> tuple[str, str, str]:
    return (str(obj.get("kind", "")), *_namespaced_name(obj))


def _repository_findings(
    policy: FileResult, objects: Iterable[Json], incoming: Json | None, options: Options
) -> list[Finding]:
    """DS401-DS406 over the active policy, the cached objects and ``incoming`` (in a file of its own)."""
    settings = _settings(options, WORKLOAD_RULES)
    cache = FileResult("cluster")
    cache.others = list(objects)
    results = [policy, cache]
    if incoming is not None:
        mine = FileResult("incoming")
        mine.others = [incoming]
        results.append(mine)
    return [f for f in lint_repository(results, settings) if f.suppressed is None]


def _without(objects: list[Json], key: tuple[str, str, str]) -> list[Json]:
    return [obj for obj in objects if _object_key(obj) != key]


def _workload(uid: str, kind: str, obj: Json, options: Options, cluster: ClusterView | None) -> Decision:
    policy = cluster.policy() if cluster is not None else None
    if cluster is None or policy is None:
        return Decision(uid, True, "", [], [], kind)
    findings = _repository_findings(policy, _without(cluster.objects(), _object_key(obj)), obj, options)
    mine = [f for f in findings if f.file == "incoming"]
    return _verdict(
        uid, kind, mine, lambda line, column: f"{kind}", options, [], deny=lambda f: f.rule in options.deny_rules
    )


def _unprotected(findings: list[Finding]) -> set[str]:
    return {f.object for f in findings if f.rule == "DS401" and f.file == "cluster"}


def _pdb(
    uid: str,
    kind: str,
    operation: str,
    obj: Json | None,
    old: Json | None,
    options: Options,
    cluster: ClusterView | None,
) -> Decision:
    if operation != "DELETE" and obj is not None:
        skipped = _skip(uid, kind, obj)
        if skipped is not None:
            return skipped
    policy = cluster.policy() if cluster is not None else None
    if policy is None or cluster is None:
        return Decision(uid, True, "", [], [], kind)
    current = obj if operation != "DELETE" else None
    previous = old
    key = _object_key(current or previous or {})
    others = _without(cluster.objects(), key)
    before = _repository_findings(policy, others + ([previous] if previous else []), None, options)
    after = _repository_findings(policy, others, current, options)
    lost = sorted(_unprotected(after) - _unprotected(before))
    warnings = [
        f"DS401 {name}: no PodDisruptionBudget covers it any more after this "
        f"{'deletion' if operation == 'DELETE' else 'change'}"
        for name in lost
    ]
    mine = [f for f in after if f.file == "incoming"]
    return _verdict(
        uid,
        kind,
        mine,
        lambda line, column: "PodDisruptionBudget",
        options,
        warnings,
        deny=lambda f: f.rule in options.deny_rules,
    )


def _workload_warnings_for_policy(result: FileResult, options: Options, cluster: ClusterView) -> list[str]:
    """What the updated active policy means for the cached workloads (DS401-DS406), as warnings."""
    findings = _repository_findings(result, cluster.objects(), None, options)
    lines = [f"{f.rule} {f.object}: {f.message}" for f in findings]
    if len(lines) > MAX_MESSAGES:
        lines = [*lines[:MAX_MESSAGES], f"and {len(lines) - MAX_MESSAGES} more workload findings"]
    return lines
