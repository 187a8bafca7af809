"""The finding value every rule, formatter and test shares.

A :class:`Finding` is immutable and knows nothing about output. ``line`` and ``column`` are 1-based positions in
the file as the user sees it (outer file for ConfigMaps). ``suppressed`` holds the reason of an inline
``# desched: disable=...`` comment, or ``None`` when the finding is active.
"""

from typing import NamedTuple

__all__ = ["SEVERITIES", "Finding", "RuleInfo", "pointer"]

SEVERITIES = ("error", "warning", "info")


def pointer(path: tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer of ``path`` (``/profiles/0/pluginConfig/1/args``)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


class Finding(NamedTuple):
    rule: str
    severity: str
    file: str
    line: int
    column: int
    message: str
    object: str = ""
    path: str = ""
    suppressed: str | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)


class RuleInfo(NamedTuple):
    """What formatters need to know about a rule (SARIF rule table, JUnit, docs links)."""

    id: str
    name: str
    summary: str
    rationale: str
    remediation: str
    severity: str
