"""GitHub Actions workflow commands: one line per active finding, escaped the way the runner unescapes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from desched.linter.finding import Finding
from desched.linter.formatters import Report, get
from desched.linter.formatters.github import escape_data, escape_property

from .cases import CASES, RULES
from .strategies import FUZZ, reports, texts

render = get("github")
COMMAND = re.compile(r"::(?P<command>[a-z]+) (?P<properties>[^:]*)::(?P<data>.*)", re.DOTALL)


def unescape_data(text: str) -> str:
    """What the Actions runner does to the message (ActionCommand.UnescapeData: `%25` last)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    """What the Actions runner does to a property value (ActionCommand.UnescapeProperty)."""
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """Split one workflow command the way the runner does: properties on ``,``, then on the first ``=``."""
    match = COMMAND.fullmatch(line)
    assert match, line
    properties = {}
    for item in match["properties"].split(","):
        key, _, value = item.partition("=")
        properties[key] = unescape_property(value)
    return match["command"], properties, unescape_data(match["data"])


def test_special_characters_are_escaped():
    lines = render(CASES["special_message"]()).splitlines()
    assert lines == [
        "::error line=1,col=1,title=DS001::stdin: mapping values are not allowed here%0D%0Aline two",
        "::error file=deploy/50%25%2Codd%3Aname.yaml,line=3,col=7,title=DS302::value 100%25 is out of range, "
        "expected: 0-99%0Asecond line: see docs, 50%25 rule [ConfigMap ns-a/desched,v2:beta]",
    ]
    _, properties, data = parse(lines[1])
    assert properties["file"] == "deploy/50%,odd:name.yaml"
    assert data.endswith("50% rule [ConfigMap ns-a/desched,v2:beta]")


def test_severities_map_to_commands_and_suppressed_findings_are_left_out():
    commands = [parse(line)[0] for line in render(CASES["mixed"]()).splitlines()]
    assert commands == ["notice", "error", "warning", "error"]


def test_clean_report_is_empty():
    assert render(Report(findings=[], files=3, rules=dict(RULES))) == ""


def test_lone_surrogates_become_question_marks():
    finding = Finding("DS001", "error", "bad\udcff.yaml", 1, 1, "m\udcffm")
    text = render(Report(findings=[finding], files=1, rules=dict(RULES)))
    text.encode("utf-8")
    assert "file=bad?.yaml" in text and text.endswith("::m?m\n")


@FUZZ
@given(texts())
def test_escaping_round_trips(text):
    assert unescape_data(escape_data(text)) == text
    assert unescape_property(escape_property(text)) == text
    assert not set("\r\n") & set(escape_data(text))
    assert not set("\r\n:,") & set(escape_property(text))


@FUZZ
@given(st.text(st.sampled_from("%0ADC2513:,\r\n ab")))
def test_escaping_round_trips_on_escape_lookalikes(text):
    assert unescape_data(escape_data(text)) == text
    assert unescape_property(escape_property(text)) == text


@FUZZ
@given(reports())
def test_arbitrary_reports_give_one_parsable_command_per_active_finding(report):
    text = render(report)
    lines = text.split("\n")
    assert lines.pop() == ""
    assert len(lines) == len(report.active)
    for line, finding in zip(lines, report.active, strict=True):
        assert "\r" not in line
        command, properties, data = parse(line)
        assert command == {"error": "error", "warning": "warning", "info": "notice"}[finding.severity]
        assert properties.get("file") == (None if finding.file == "-" else finding.file)
        assert properties["line"] == str(finding.line) and properties["col"] == str(finding.column)
        assert properties["title"] == finding.rule
        assert data == (f"{finding.message} [{finding.object}]" if finding.object else finding.message)
