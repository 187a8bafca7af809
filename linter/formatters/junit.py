"""JUnit XML output, for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines).

Contract: a ``<testsuites>`` document holding one ``<testsuite name="desched">`` whose ``tests``, ``failures``
and ``errors`` attributes count its test cases. Each active finding is a ``<testcase classname="FILE"
name="RULE LINE:COL">``. An error or warning holds a ``<failure message="MESSAGE" type="SEVERITY">`` whose text gives
the message, the object, the JSON pointer and the location. An info finding is not a failure: its test case passes
and carries the same text in ``<system-out>`` (prefixed ``info: ``), JUnit's place for what a passing test has to
say, so CI dashboards neither count it as failed nor hide it as skipped. A clean run is a single passing test case named
``desched lint``.
Stdin (``-``) is named ``stdin``. Suppressed findings are left out. Text is escaped by ``xml.etree``; characters
XML 1.0 cannot carry at all (control characters, lone surrogates) are written as ``\\xNN``/``\\uNNNN``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from desched.linter.finding import Finding
from desched.linter.formatters import Report

__all__ = ["render"]

_LINE_BREAK = re.compile("\r\n?")
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render(report: Report) -> str:
    """Render the active findings of ``report`` as a JUnit XML document (one test case each; infos pass)."""
    active = report.active
    tests = str(max(len(active), 1))
    failures = str(sum(finding.severity != "info" for finding in active))
    root = ET.Element("testsuites", name="desched", tests=tests, failures=failures, errors="0")
    suite = ET.SubElement(root, "testsuite", name="desched", tests=tests, failures=failures, errors="0", skipped="0")
    for finding in active:
        _testcase(suite, finding)
    if not active:
        ET.SubElement(suite, "testcase", classname="desched", name="desched lint")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _testcase(suite: ET.Element, finding: Finding) -> None:
    file = "stdin" if finding.file == "-" else finding.file
    location = f"{finding.line}:{finding.column}"
    case = ET.SubElement(suite, "testcase", classname=_xml(file), name=_xml(f"{finding.rule} {location}"))
    lines = [finding.message]
    if finding.object:
        lines.append(f"object: {finding.object}")
    if finding.path:
        lines.append(f"path: {finding.path}")
    lines.append(f"location: {file}:{location}")
    # XML parsers turn a raw CR in text into LF anyway; write LF so the document is stable byte for byte.
    text = _xml(_LINE_BREAK.sub("\n", "\n".join(lines)))
    if finding.severity == "info":
        ET.SubElement(case, "system-out").text = "info: " + text
    else:
        ET.SubElement(case, "failure", message=_xml(finding.message), type=_xml(finding.severity)).text = text


def _xml(text: str) -> str:
    return _NOT_XML.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
