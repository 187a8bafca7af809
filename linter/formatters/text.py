"""Human-readable output for a terminal (the default format).

Contract: findings are grouped by file, in report order, under a header line naming the file. Each active finding
is one line ``  LINE:COL  severity  message  (RULE) [object]`` followed, when ``report.sources`` has the file, by
the offending source line and a caret under the column. Suppressed findings are not shown (only counted). Each
template not linted (``report.skipped``) follows as ``skipped FILE: reason``. The output ends with a summary line
(``3 errors, 1 warning, 0 infos in 2 files``, ``no problems found in 2 files``, or ``no YAML files to lint: nothing
was checked`` when the paths held no file to lint; with templates skipped, ``; 1 template skipped`` is added, or it
reads ``nothing was checked: 1 template skipped`` when nothing else was linted) and a newline. ANSI colours
are used only when ``report.color`` is true. Control and bidi characters coming from files or messages are shown
escaped, so a hostile file cannot drive the terminal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache

from desched.linter.finding import Finding
from desched.linter.formatters import Report

__all__ = ["render"]

_RESET = "\x1b[0m"
_STYLES = {
    "error": "\x1b[31m",
    "warning": "\x1b[33m",
    "info": "\x1b[34m",
    "file": "\x1b[1;4m",
    "dim": "\x1b[2m",
    "summary": "\x1b[1m",
}
_POSITION_WIDTH = 10  # "  LINE:COL" padded to this, then two spaces at least
_SEVERITY_WIDTH = len("warning")
_MAX_SOURCE_WIDTH = 160  # longer source lines are shown as a window around the column

_Paint = Callable[[str, str], str]


@cache
def _line_break() -> re.Pattern[str]:
    """Line breaks as libyaml counts them, so that line numbers from the loader index the right line (compiled
    when a report first shows a finding: a clean run shows none)."""
    return re.compile("\r\n|[\r\n\x85\u2028\u2029]")


@cache
def _unsafe() -> re.Pattern[str]:
    """C0/C1 controls (except tab), DEL, line/paragraph separators, the bidi controls that can reorder what the
    reader sees, and lone surrogates (undecodable file names), which could not even be written out as UTF-8."""
    return re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def render(report: Report) -> str:
    """Render ``report`` as grouped, optionally coloured text ending with a summary line."""
    paint = _painter(report.color)
    out: list[str] = []
    groups: dict[str, list[Finding]] = {}
    for finding in report.active:
        groups.setdefault(finding.file, []).append(finding)
    for file, findings in groups.items():
        if out:
            out.append("")
        out.append(paint("file", _display_name(file)))
        lines = _source_lines(report.sources.get(file))
        for finding in findings:
            out.append(_finding_line(finding, paint))
            if lines is not None and 1 <= finding.line <= len(lines):
                out.extend(_source_excerpt(lines[finding.line - 1], finding, paint))
    if out:
        out.append("")
    out.extend(f"skipped {_display_name(file)}: {_safe(reason)}" for file, reason in report.skipped)
    out.append(paint("summary", _summary(report)))
    return "\n".join(out) + "\n"


def _painter(color: bool) -> _Paint:
    def paint(style: str, text: str) -> str:
        code = _STYLES.get(style)
        return f"{code}{text}{_RESET}" if color and code and text else text

    return paint


def _finding_line(finding: Finding, paint: _Paint) -> str:
    position = f"  {finding.line}:{finding.column}"
    severity = finding.severity
    head = position.ljust(_POSITION_WIDTH) + "  " + paint(severity, severity) + " " * (_SEVERITY_WIDTH - len(severity))
    indent = " " * (max(len(position), _POSITION_WIDTH) + 2 + _SEVERITY_WIDTH + 2)
    message = f"\n{indent}".join(_safe(part) for part in _line_break().split(finding.message))
    line = f"{head}  {message}  {paint('dim', f'({_safe(finding.rule)})')}"
    if finding.object:
        line += f" [{_safe(finding.object)}]"
    return line


def _source_excerpt(source: str, finding: Finding, paint: _Paint) -> list[str]:
    """The source line (made safe, windowed when long) and a caret under ``finding.column``."""
    index = min(max(finding.column, 1), len(source) + 1) - 1
    start, end, prefix, suffix = 0, len(source), "", ""
    if len(source) > _MAX_SOURCE_WIDTH:
        start = max(0, min(index - _MAX_SOURCE_WIDTH // 2, len(source) - _MAX_SOURCE_WIDTH))
        end = start + _MAX_SOURCE_WIDTH
        prefix = "..." if start > 0 else ""
        suffix = "..." if end < len(source) else ""
    before = _safe(source[start:index])
    shown = prefix + before + _safe(source[index:end]) + suffix
    pad = "".join(_blank(char) for char in prefix + before)
    return [f"    {shown}".rstrip(), f"    {pad}{paint(finding.severity, '^')}"]


def _blank(char: str) -> str:
    """What to print under ``char`` so that the caret lines up: tabs stay tabs, wide characters take two cells."""
    if char == "\t":
        return "\t"
    if unicodedata.combining(char):
        return ""
    return "  " if unicodedata.east_asian_width(char) in ("W", "F") else " "


def _safe(text: str) -> str:
    return _unsafe().sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _display_name(file: str) -> str:
    return "<stdin>" if file == "-" else _safe(file)


def _source_lines(text: str | None) -> list[str] | None:
    return None if text is None else _line_break().split(text)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _summary(report: Report) -> str:
    if not report.skipped:
        return _checked(report)
    skipped = _plural(len(report.skipped), "template") + " skipped"
    if report.files == 0 and not report.findings:
        return f"nothing was checked: {skipped}"
    return f"{_checked(report)}; {skipped}"


def _checked(report: Report) -> str:
    counts = report.counts()
    files = _plural(report.files, "file")
    suppressed = len(report.findings) - len(report.active)
    tail = f" ({suppressed} suppressed)" if suppressed else ""
    if report.files == 0 and not report.findings:
        return "no YAML files to lint: nothing was checked"
    if not any(counts.values()):
        return f"no problems found in {files}{tail}"
    severities = ", ".join(_plural(counts[key + "s"], key) for key in ("error", "warning", "info"))
    return f"{severities} in {files}{tail}"
