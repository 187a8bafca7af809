"""What every admission decision shares: the :class:`Decision` value, the options and cluster view it reads, and how
findings become an answer (denial message, warnings, locations).

Contract: :func:`verdict` denies in ``enforce`` mode when some finding matches ``deny`` (the first
:data:`MAX_MESSAGES` in the message), and returns every other finding as a warning of at most :data:`MAX_WARNING`
characters, each as ``RULE LOCATION: MESSAGE``, the first :data:`MAX_MESSAGES` of them and then one line that says how
many more there are (:func:`capped`: kubectl shows every warning, and an answer must not grow with the object).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from desched.linter.engine import FileResult, Settings
from desched.linter.finding import Finding
from desched.tree import Json, mapping_or_empty

__all__ = [
    "MAX_MESSAGES",
    "MAX_WARNING",
    "SKIP_ANNOTATION",
    "ClusterView",
    "Decision",
    "Json",
    "Options",
    "capped",
    "namespaced_name",
    "response",
    "settings_for",
    "skip",
    "verdict",
]

SKIP_ANNOTATION = "desched.io/skip-validation"
MAX_MESSAGES = 10
MAX_WARNING = 240


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


def response(decision: Decision) -> Json:
    """The AdmissionReview v1 answering ``decision``."""
    answer: Json = {"uid": decision.uid, "allowed": decision.allowed}
    if not decision.allowed:
        answer["status"] = {"code": 403, "reason": "Forbidden", "message": decision.message}
    if decision.warnings:
        answer["warnings"] = decision.warnings
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": answer}


def namespaced_name(obj: Json) -> tuple[str, str]:
    metadata = mapping_or_empty(obj.get("metadata"))
    return str(metadata.get("namespace") or "default"), str(metadata.get("name") or "")


def skip(uid: str, kind: str, obj: Json) -> Decision | None:
    """The answer to an object that opts out with a reason (``desched.io/skip-validation``), else None."""
    annotations = mapping_or_empty(mapping_or_empty(obj.get("metadata")).get("annotations"))
    if SKIP_ANNOTATION not in annotations:
        return None
    reason = str(annotations[SKIP_ANNOTATION]).strip()
    if not reason:
        return None  # an opt-out must say why; without a reason it is not honoured (and the rules still run)
    return Decision(
        uid, True, "", [f"desched validation skipped ({SKIP_ANNOTATION}: {reason})"[:MAX_WARNING]], [], kind
    )


def settings_for(options: Options, only: Sequence[str] | None = None) -> Settings:
    """The engine settings of ``options``, restricted to the rules ``only`` when given."""
    base = options.settings or Settings()
    if only is None:
        return base
    from desched.linter import rules

    disabled = {module.ID for module in rules.all_rules()} - set(only)
    return base._replace(disabled=frozenset(disabled | set(base.disabled)))


def capped(lines: list[str], what: str) -> list[str]:
    """The first :data:`MAX_MESSAGES` of ``lines``, then ``and N more <what>`` when there are more."""
    if len(lines) <= MAX_MESSAGES:
        return lines
    return [*lines[:MAX_MESSAGES], f"and {len(lines) - MAX_MESSAGES} more {what}"]


def verdict(
    uid: str,
    kind: str,
    findings: list[Finding],
    locate: Callable[[Finding], str],
    options: Options,
    extra_warnings: list[str],
    deny: Callable[[Finding], bool],
) -> Decision:
    """The decision on ``findings`` (see the module contract); ``locate`` says where a finding is."""
    denying = [f for f in findings if deny(f)] if options.mode == "enforce" else []
    warning_findings = [f for f in findings if f not in denying]
    warnings = capped([_line(f, locate) for f in warning_findings], "findings") + extra_warnings
    rules = sorted({f.rule for f in findings})
    if not denying:
        return Decision(uid, True, "", [w[:MAX_WARNING] for w in warnings], rules, kind)
    shown = "; ".join(_line(f, locate) for f in denying[:MAX_MESSAGES])
    more = f"; and {len(denying) - MAX_MESSAGES} more" if len(denying) > MAX_MESSAGES else ""
    message = f"desched: {len(denying)} error{'s' if len(denying) != 1 else ''}: {shown}{more}"
    return Decision(uid, False, message, [w[:MAX_WARNING] for w in warnings], rules, kind)


def _line(finding: Finding, locate: Callable[[Finding], str]) -> str:
    return f"{finding.rule} {locate(finding)}: {finding.message}"
