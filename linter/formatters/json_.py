"""Machine-readable JSON output; other tools parse it, so its shape is a contract.

Contract::

    {"findings": [{"rule": "DS302", "severity": "error", "file": "path as given", "line": 12, "column": 9,
                   "message": "...", "object": "ConfigMap kube-system/descheduler",
                   "path": "/profiles/0/pluginConfig/1/args/thresholds/cpu"}],
     "summary": {"files": 3, "errors": 1, "warnings": 0, "infos": 0}}

Only active findings are listed, in report order, and only they are counted. When templates were skipped (not YAML
once their template actions are neutralised), the summary also has ``"skipped": [{"file": "...", "reason":
"..."}]``, in the order they were met; ``files`` does not count them. When a file named on the command line holds
nothing desched judges (no policy, workload, PodDisruptionBudget or descheduler chart wrapper), the summary has
``"unchecked": ["file", ...]`` in the order the files were named; ``files`` counts them. The document is
pretty-printed with an indent of 2, keeps non-ASCII characters as they are and ends with a newline. Lone surrogates
(from undecodable file names) are written as ``\\udcxx`` escapes, so the text is always valid UTF-8 and parses back to
the same data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from desched.linter.formatters import Report

__all__ = ["dumps", "render"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def render(report: Report) -> str:
    """Render the active findings of ``report`` and their counts as a JSON document."""
    findings = [
        {
            "rule": finding.rule,
            "severity": finding.severity,
            "file": finding.file,
            "line": finding.line,
            "column": finding.column,
            "message": finding.message,
            "object": finding.object,
            "path": finding.path,
        }
        for finding in report.active
    ]
    summary: dict[str, Any] = {"files": report.files, **report.counts()}
    if report.skipped:
        summary["skipped"] = [{"file": file, "reason": reason} for file, reason in report.skipped]
    if report.unchecked:
        summary["unchecked"] = list(report.unchecked)
    return dumps({"findings": findings, "summary": summary})


def dumps(document: Any) -> str:
    """``document`` as indented JSON text with a trailing newline, non-ASCII kept, lone surrogates escaped."""
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"
