"""The admission decision, independent of HTTP: one ``AdmissionRequest`` in, one :class:`Decision` out.

Contract:
* :func:`parse_review` turns a request body into an ``admission.k8s.io/v1`` ``AdmissionReview``'s ``request`` or
  raises :class:`BadReview` with a message for a 400 answer (also for JSON nesting deeper than
  :data:`~desched.webhook.depth.MAX_DEPTH` levels).
* :func:`decide` runs the same rules as ``desched lint`` on the object the API server sends:
  - a ConfigMap holding a DeschedulerPolicy or the chart's values (any data key), a ``KubeDescheduler``, a Flux
    ``HelmRelease`` or an Argo CD ``Application``/``ApplicationSet`` of the descheduler chart: every finding of
    severity error denies in ``enforce`` mode, the others come back as ``warnings``; other ConfigMaps and wrappers
    of other charts are allowed at once;
  - Deployments, StatefulSets, ReplicaSets, ReplicationControllers, Jobs and PDBs: the workload checks
    (:mod:`desched.webhook.workloads`) against the active policy and the cached cluster objects; an update of the
    active policy ConfigMap is checked against the cached workloads too (warnings only); a workload of any kind that
    runs the descheduler also gets the deployment rules (DS6xx) that need only the object;
  - ``warn`` mode never denies; the annotation ``desched.io/skip-validation: <reason>`` skips validation (with a
    warning saying so); DELETE and other operations are allowed at once. ``dryRun`` requests are decided the same way.
* :func:`lone_surrogate` finds text that is not Unicode: a JSON escape of half a surrogate pair (``"\\ud800"``), which a
  JSON parser accepts but nothing can encode or parse as YAML; the server answers such an object without a decision.
* Nothing is made into text that was not text: of a ConfigMap only the data keys that hold a policy are parsed (the
  policy locator's rule, :func:`desched.gitops.documents.configmap_keys`), each on its own, and a location is
  ``data[<key>]:<line>:<column>`` inside that key's text; a KubeDescheduler or a wrapper is linted as the object
  received, and a location is the JSON pointer of the field (``/spec/profiles/1``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from desched.gitops.documents import configmap_keys
from desched.linter.engine import (
    FileResult,
    Settings,
    lint_configmap_key,
    lint_documents,
    lint_repository,
    lint_text,
)
from desched.linter.finding import Finding
from desched.reading.yamlnodes import from_json
from desched.tree import mapping_or_empty
from desched.webhook.decision import (
    ClusterView,
    Decision,
    Json,
    Options,
    namespaced_name,
    settings_for,
    skip,
    verdict,
)
from desched.webhook.depth import MAX_DEPTH, too_deep
from desched.webhook.workloads import ADMITTED_KINDS, pdb_decision, policy_warnings, workload_decision

__all__ = ["POLICY_KINDS", "BadReview", "configmap_policies", "decide", "lone_surrogate", "parse_review"]

#: The GitOps wrappers of the descheduler chart's values the webhook is sent (docs/architecture.md#policy-locator).
WRAPPER_KINDS = ("HelmRelease", "Application", "ApplicationSet")
POLICY_KINDS = ("ConfigMap", "KubeDescheduler", *WRAPPER_KINDS)
#: A JSON escape that may stand for half a surrogate pair: a body without one holds no lone surrogate (its bytes
#: must be UTF-8, which encodes none).
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins a pair into one character: what remains is lone


class BadReview(Exception):
    """The body is not a usable AdmissionReview; the message says why (HTTP 400)."""


def parse_review(body: bytes) -> Json:
    """The ``request`` of an AdmissionReview v1 body (see the module contract)."""
    try:
        document = json.loads(body)
    except RecursionError:
        raise BadReview(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise BadReview(f"the body is not JSON: {error}") from None
    if too_deep(document, text=body):
        raise BadReview(f"the body nests deeper than {MAX_DEPTH} levels")
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


def lone_surrogate(body: bytes, request: Json) -> str | None:
    """The JSON pointer (surrogates written ``\\udXXX``) of the first key or string of the request's ``object`` or
    ``oldObject`` that holds a lone surrogate, or None. A body without an escape that could be one is not walked."""
    if _ESCAPED_SURROGATE.search(body) is None:
        return None
    pending: list[tuple[str, Any]] = [(f"/{field}", request.get(field)) for field in ("oldObject", "object")]
    while pending:
        pointer, value = pending.pop()
        if isinstance(value, dict):
            pending.extend((f"{pointer}/{key}", item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            pending.extend((f"{pointer}/{index}", item) for index, item in reversed(list(enumerate(value))))
        if _SURROGATE.search(pointer) or (isinstance(value, str) and _SURROGATE.search(value)):
            return pointer.encode("utf-8", "backslashreplace").decode("utf-8")
    return None


def decide(
    request: Json, options: Options, cluster: ClusterView | None = None, own: list[Finding] | None = None
) -> Decision:
    """The decision on one admission request (see the module contract); ``own``: what the deployment rules find in
    the workload, when found elsewhere (:func:`~desched.webhook.workloads.own_findings`)."""
    uid = str(request["uid"])
    kind = str(mapping_or_empty(request["kind"]).get("kind", ""))
    operation = request["operation"]
    obj = request.get("object") if isinstance(request.get("object"), dict) else None
    old = request.get("oldObject") if isinstance(request.get("oldObject"), dict) else None
    if kind == "PodDisruptionBudget" and operation in ("CREATE", "UPDATE", "DELETE"):
        return pdb_decision(uid, kind, operation, obj, old, options, cluster)
    if operation not in ("CREATE", "UPDATE") or obj is None:
        return Decision(uid, True, "", [], [], kind)
    skipped = skip(uid, kind, obj)
    if skipped is not None:
        return skipped
    if kind == "ConfigMap":
        return _configmap(uid, kind, obj, options, cluster)
    if kind == "KubeDescheduler" or kind in WRAPPER_KINDS:
        return _policy_object(uid, kind, obj, options)
    if kind in ADMITTED_KINDS:
        return workload_decision(uid, kind, obj, options, cluster, own=own)
    return Decision(uid, True, "", [], [], kind)


def configmap_policies(obj: Json, settings: Settings) -> FileResult | None:
    """Lint every data key of the ConfigMap ``obj`` that holds a policy, or the chart's values with a policy (a Flux
    HelmRelease's ``valuesFrom``), each as its own text named ``data[<key>]``; one result with all their policies
    and findings, or None when no key holds one."""
    data = mapping_or_empty(obj.get("data"))
    keys, values = configmap_keys(data)
    if not keys and not values:
        return None
    namespace, name = namespaced_name(obj)
    owner = f"ConfigMap {namespace}/{name}"
    combined = FileResult(owner)
    results = [lint_configmap_key(f"data[{key}]", data[key], key, owner, settings) for key in keys]
    results += [lint_text(f"data[{key}]", data[key], settings) for key in values]
    for result in results:
        combined.policies.extend(result.policies)
        combined.checked.extend(result.checked)
        combined.findings.extend(result.findings)
    return combined if combined.policies or combined.findings else None


def _in_key(finding: Finding) -> str:
    return f"{finding.file}:{finding.line}:{finding.column}"


def _at_pointer(finding: Finding) -> str:
    return finding.path or "/"


def _configmap(uid: str, kind: str, obj: Json, options: Options, cluster: ClusterView | None) -> Decision:
    settings = settings_for(options)
    result = configmap_policies(obj, settings)
    if result is None:
        return Decision(uid, True, "", [], [], kind)  # not a policy ConfigMap
    findings = _active(result.findings + lint_repository([result], settings))
    warnings: list[str] = []
    if cluster is not None and result.policies and cluster.is_active_policy(*namespaced_name(obj)):
        warnings = policy_warnings(result, options, cluster)
    return verdict(uid, kind, findings, _in_key, options, warnings, deny=lambda f: f.severity == "error")


def _policy_object(uid: str, kind: str, obj: Any, options: Options) -> Decision:
    """A KubeDescheduler, or a wrapper of the chart's values (nothing to check unless it installs the descheduler
    chart), linted as received and located by JSON pointer."""
    namespace, name = namespaced_name(obj)
    result = lint_documents(f"{kind} {namespace}/{name}", [from_json(obj)], settings_for(options))
    findings = _active(result.findings)
    return verdict(uid, kind, findings, _at_pointer, options, [], deny=lambda f: f.severity == "error")


def _active(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.suppressed is None]
