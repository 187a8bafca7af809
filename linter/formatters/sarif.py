"""SARIF 2.1.0 output, shaped for GitHub code scanning.

Contract: one run whose ``tool.driver.rules`` lists every registered rule sorted by id (plus a bare entry for any
rule id a finding carries that is not registered), and whose ``results`` is always present (``[]`` when clean).
Each result has ``ruleId`` and a matching ``ruleIndex``, a ``level`` (``note`` for info), the message, one physical
location whose ``artifactLocation.uri`` is relative to ``report.base_dir`` (``uriBaseId`` ``%SRCROOT%``, forward
slashes, percent-encoded; ``-`` becomes ``stdin``; a file outside ``base_dir`` gets an absolute ``file:`` URI) and a
region whose line and column are at least 1, logical locations for the object and the JSON pointer, and
``partialFingerprints`` hashed from rule, file, path and message (not the line, so alerts survive edits that move
them). Suppressed findings are included, with an ``inSource`` suppression carrying the reason.

At most :data:`MAX_RESULTS` results per run (GitHub code scanning rejects a whole upload above 25,000): past it,
suppressed results are left out first, then infos, then warnings, then errors from the end, and the run's invocation
carries a warning notification that says how many of each were cut.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any
from urllib.parse import quote

from desched.linter.finding import Finding, RuleInfo
from desched.linter.formatters import Report
from desched.linter.formatters.json_ import dumps

__all__ = ["FINGERPRINT_KEY", "INFORMATION_URI", "MAX_RESULTS", "render"]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/desched/desched"
RULES_DOC = f"{INFORMATION_URI}/blob/main/docs/rules.md"
FINGERPRINT_KEY = "deschedFindingHash/v1"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_DRIVE = re.compile(r"^[A-Za-z]:/")
MAX_RESULTS = 25_000
_CUT_ORDER = ("suppressed", "info", "warning", "error")  # what goes first when a run has too many results


def render(report: Report) -> str:
    """Render every finding of ``report`` (suppressed ones marked as such) as a SARIF 2.1.0 log."""
    infos = dict(report.rules)
    for finding in report.findings:
        infos.setdefault(finding.rule, RuleInfo(finding.rule, finding.rule, "", "", "", finding.severity))
    ordered = sorted(infos)
    index = {rule_id: position for position, rule_id in enumerate(ordered)}
    base = os.path.abspath(report.base_dir)
    seen: dict[str, int] = {}
    kept, cut = _capped(report.findings)
    results = [_result(finding, index[finding.rule], base, seen) for finding in kept]
    driver = {
        "name": "desched",
        "informationUri": INFORMATION_URI,
        "version": report.version,
        "semanticVersion": report.version,
        "rules": [_rule(infos[rule_id]) for rule_id in ordered],
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _file_uri(base, directory=True)}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if cut:
        counts = ", ".join(f"{count:,} {kind}" for kind, count in cut.items() if count)
        text = (
            f"{len(report.findings):,} results, more than the {MAX_RESULTS:,} a SARIF run may hold for GitHub code "
            f"scanning: {sum(cut.values()):,} left out ({counts}); the text, JSON and JUnit outputs list them all"
        )
        notification = {"level": "warning", "message": {"text": text}, "descriptor": {"id": "results-capped"}}
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": [notification]}]
    return dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]})


def _kind(finding: Finding) -> str:
    return "suppressed" if finding.suppressed is not None else finding.severity


def _capped(findings: list[Finding]) -> tuple[list[Finding], dict[str, int]]:
    """At most :data:`MAX_RESULTS` findings, in their order, and how many of each kind were cut (empty: none)."""
    excess = len(findings) - MAX_RESULTS
    if excess <= 0:
        return findings, {}
    cut = dict.fromkeys(_CUT_ORDER, 0)
    dropped: set[int] = set()
    for kind in _CUT_ORDER:
        for position in range(len(findings) - 1, -1, -1):  # from the end: the first findings of a kind stay
            if len(dropped) == excess:
                break
            if position not in dropped and _kind(findings[position]) == kind:
                dropped.add(position)
                cut[kind] += 1
    kept = [finding for position, finding in enumerate(findings) if position not in dropped]
    return kept, {kind: count for kind, count in cut.items() if count}


def _rule(info: RuleInfo) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": info.id, "name": info.name or info.id}
    if info.summary:
        rule["shortDescription"] = {"text": info.summary}
    if info.rationale:
        rule["fullDescription"] = {"text": info.rationale}
    help_uri = f"{RULES_DOC}#{info.id.lower()}"
    help_text = "\n\n".join(part for part in (info.remediation, info.rationale) if part)
    if help_text:
        markdown = "\n\n".join(f"**{title}** {part}" for title, part in _help_parts(info))
        rule["help"] = {"text": help_text, "markdown": f"{markdown}\n\n[{info.id} documentation]({help_uri})"}
    rule["helpUri"] = help_uri
    rule["defaultConfiguration"] = {"level": _LEVELS.get(info.severity, "warning")}
    rule["properties"] = {"tags": ["descheduler"]}
    return rule


def _help_parts(info: RuleInfo) -> list[tuple[str, str]]:
    parts = [("How to fix:", info.remediation), ("Why:", info.rationale)]
    return [(title, text) for title, text in parts if text]


def _result(finding: Finding, rule_index: int, base: str, seen: dict[str, int]) -> dict[str, Any]:
    artifact = _artifact(finding.file, base)
    region = {"startLine": max(finding.line, 1), "startColumn": max(finding.column, 1)}
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS.get(finding.severity, "warning"),
        "message": {"text": finding.message or finding.rule},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
    }
    logical = []
    if finding.object:
        logical.append({"name": finding.object, "kind": "resource"})
    if finding.path:
        name = finding.path.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        fully = f"{finding.object}{finding.path}" if finding.object else finding.path
        logical.append({"name": name, "fullyQualifiedName": fully, "kind": "property"})
    if logical:
        result["locations"][0]["logicalLocations"] = logical
    result["partialFingerprints"] = {FINGERPRINT_KEY: _fingerprint(finding, artifact["uri"], seen)}
    if finding.suppressed is not None:
        suppression = {"kind": "inSource"}
        if finding.suppressed:
            suppression["justification"] = finding.suppressed
        result["suppressions"] = [suppression]
    return result


def _fingerprint(finding: Finding, uri: str, seen: dict[str, int]) -> str:
    """A hash of what identifies the finding, plus an occurrence count that tells identical ones apart."""
    key = "\0".join((finding.rule, uri, finding.path, finding.message))
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    return f"{digest}:{seen[digest]}"


def _artifact(file: str, base: str) -> dict[str, str]:
    """``artifactLocation`` for ``file`` (as the user gave it, relative to the current directory)."""
    if file == "-":
        return {"uri": "stdin"}
    path = os.path.abspath(file)
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        relative = ""
    if not relative or relative == os.curdir or relative.startswith(os.pardir + os.sep) or relative == os.pardir:
        return {"uri": _file_uri(path)}
    return {"uri": _quote(relative.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def _file_uri(path: str, directory: bool = False) -> str:
    """Absolute ``file:`` URI of an absolute ``path`` (a directory's ends with a slash)."""
    posix = path.replace(os.sep, "/")
    if _DRIVE.match(posix):
        posix = "/" + posix
    if directory and not posix.endswith("/"):
        posix += "/"
    return "file://" + _quote(posix, safe="/:" if _DRIVE.match(posix[1:]) else "/")


def _quote(path: str, safe: str = "/") -> str:
    # Undecodable bytes of a file name go back to the bytes they were (surrogateescape); any other lone
    # surrogate cannot be encoded at all and becomes "?" (%3F).
    try:
        return quote(path, safe=safe, errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(path, safe=safe, errors="replace")
