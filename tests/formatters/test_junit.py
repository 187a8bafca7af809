"""JUnit XML: parses with xml.etree, counts agree with the test cases, hostile text stays well-formed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given

from desched.linter.finding import Finding
from desched.linter.formatters import Report, get

from .cases import CASES, RULES
from .strategies import FUZZ, reports

render = get("junit")


def parse(report: Report) -> ET.Element:
    text = render(report)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def check_counts(root: ET.Element, report: Report) -> None:
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert suite.get("name") == "desched"
    cases = suite.findall("testcase")
    failures = suite.findall("testcase/failure")
    infos = [finding for finding in report.active if finding.severity == "info"]
    assert len(suite.findall("testcase/system-out")) == len(infos)
    for element in (root, suite):
        assert int(element.get("tests", "-1")) == len(cases) == max(len(report.active), 1)
        assert int(element.get("failures", "-1")) == len(failures) == len(report.active) - len(infos)
        assert int(element.get("errors", "-1")) == 0
    if not report.active:
        assert [(case.get("classname"), case.get("name")) for case in cases] == [("desched", "desched lint")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_parses_and_counts_match(case):
    report = CASES[case]()
    check_counts(parse(report), report)


def test_testcases_name_file_rule_and_position():
    suite = parse(CASES["mixed"]()).find("testsuite")
    assert suite is not None
    cases = [(case.get("classname"), case.get("name")) for case in suite.findall("testcase")]
    assert cases == [
        ("deploy/configmap.yaml", "DS105 10:5"),
        ("deploy/configmap.yaml", "DS001 11:2"),
        ("policies/low-node.yaml", "DS210 8:34"),
        ("policies/low-node.yaml", "DS302 12:18"),
    ]
    failure = suite.find("testcase/failure")
    assert failure is not None
    assert failure.get("type") == "error"
    assert failure.get("message") == CASES["mixed"]().active[1].message
    assert failure.text is not None
    assert "object: ConfigMap kube-system/descheduler" in failure.text
    assert "location: deploy/configmap.yaml:11:2" in failure.text


def test_infos_pass_with_their_text_in_system_out():
    # issue 27, item 8: an info finding is a passing test case (JUnit's system-out), not a failure
    report = CASES["mixed"]()
    suite = parse(report).find("testsuite")
    assert suite is not None
    assert [finding.severity for finding in report.active] == ["info", "error", "warning", "error"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "3", "0")
    info = suite.findall("testcase")[0]
    assert info.find("failure") is None and info.find("skipped") is None
    out = info.find("system-out")
    assert out is not None and out.text is not None
    assert out.text.startswith("info: " + report.active[0].message + "\n")
    assert "object: ConfigMap kube-system/descheduler" in out.text
    assert "path: /maxNoOfPodsToEvictPerNode" in out.text
    assert "location: deploy/configmap.yaml:10:5" in out.text
    assert [case.find("failure") is not None for case in suite.findall("testcase")] == [False, True, True, True]


def test_markup_and_characters_xml_cannot_carry_are_escaped():
    message = 'a <b> & "c" ]]> \x00\x1b\ufffe \udcff\n\r\tend'
    finding = Finding("DS001", "error", "x<&>.yaml", 1, 1, message, object="o&o", path="/a<b")
    report = Report(findings=[finding], files=1, rules=dict(RULES))
    root = parse(report)
    check_counts(root, report)
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == 'a <b> & "c" ]]> \\x00\\x1b\\ufffe \\udcff\n\r\tend'
    assert root.find("testsuite/testcase[@classname='x<&>.yaml']") is not None


@FUZZ
@given(reports(surrogates=True))
def test_arbitrary_reports_stay_well_formed(report):
    root = parse(report)
    check_counts(root, report)
    failures = root.findall("testsuite/testcase/failure")
    failing = [finding for finding in report.active if finding.severity != "info"]
    for failure, finding in zip(failures, failing, strict=True):
        assert failure.get("type") == finding.severity
