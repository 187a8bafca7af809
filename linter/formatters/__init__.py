"""Output formats. Each formatter is a pure function from findings to text; they know nothing about rules' logic.

``FORMATTERS[name](report) -> str`` where ``report`` is a :class:`Report`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from desched.linter.finding import Finding, RuleInfo

__all__ = ["FORMATTERS", "Report", "findings_report", "get"]


class Report:
    """Everything a formatter may show.

    ``findings`` are sorted and include suppressed ones (``Finding.suppressed`` set); ``rules`` is every rule's
    metadata by ID (default: the registry's, read on first use, so that a format that shows none never imports every
    rule); ``sources`` maps a file as given to its text, for showing the offending line; ``base_dir`` anchors
    relative SARIF URIs; ``skipped`` lists the templates not linted as (file, reason) pairs; ``unchecked`` the files
    named on the command line in which nothing desched judges was found.
    """

    __slots__ = ("_rules", "base_dir", "color", "files", "findings", "skipped", "sources", "unchecked", "version")

    def __init__(
        self,
        findings: list[Finding],
        files: int,
        rules: dict[str, RuleInfo] | None = None,
        sources: dict[str, str] | None = None,
        version: str = "0",
        color: bool = False,
        base_dir: str | None = None,
        skipped: Sequence[tuple[str, str]] = (),
        unchecked: Sequence[str] = (),
    ) -> None:
        self.findings = findings
        self.files = files
        self._rules = rules
        self.sources = sources if sources is not None else {}
        self.version = version
        self.color = color
        self.base_dir = base_dir if base_dir is not None else os.getcwd()
        self.skipped = list(skipped)
        self.unchecked = list(unchecked)

    @property
    def rules(self) -> dict[str, RuleInfo]:
        if self._rules is None:
            self._rules = _rule_infos()
        return self._rules

    @property
    def active(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.suppressed is None]

    def counts(self) -> dict[str, int]:
        counts = {"errors": 0, "warnings": 0, "infos": 0}
        for finding in self.active:
            counts[finding.severity + "s"] += 1
        return counts


Formatter = Callable[[Report], str]


def get(name: str) -> Formatter:
    """The formatter called ``name``; imported on demand so that one format never pays for another."""
    import importlib

    module = importlib.import_module(f".{FORMATTERS[name]}", __name__)
    render: Formatter = module.render
    return render


FORMATTERS = {"text": "text", "json": "json_", "sarif": "sarif", "junit": "junit", "github": "github"}


def findings_report(
    findings: list[Finding],
    files: int,
    sources: dict[str, str],
    color: str = "never",
    skipped: Sequence[tuple[str, str]] = (),
    unchecked: Sequence[str] = (),
) -> Report:
    """A :class:`Report` of ``findings`` with every rule's metadata (``color``: auto, always or never), the
    templates ``skipped`` and the named files ``unchecked``."""
    from desched.version import __version__

    use_color = color == "always" or (color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    findings = sorted(findings, key=Finding.sort_key)
    return Report(findings, files, None, sources, __version__, use_color, skipped=skipped, unchecked=unchecked)


def _rule_infos() -> dict[str, RuleInfo]:
    """Every registered rule's metadata, by ID."""
    from desched.linter import rules

    return {
        module.ID: RuleInfo(
            module.ID, module.NAME, module.SUMMARY, module.RATIONALE, module.REMEDIATION, module.SEVERITY
        )
        for module in rules.all_rules()
    }
