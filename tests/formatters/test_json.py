"""The JSON contract: shape, order, counts, and that arbitrary text always parses back to the same data."""

from __future__ import annotations

import json

from hypothesis import given

from desched.linter.finding import Finding
from desched.linter.formatters import Report, get

from .cases import CASES, RULES
from .strategies import FUZZ, reports

render = get("json")
KEYS = ["rule", "severity", "file", "line", "column", "message", "object", "path"]


def expected(report: Report) -> dict[str, object]:
    return {
        "findings": [{key: getattr(finding, key) for key in KEYS} for finding in report.active],
        "summary": {"files": report.files, **report.counts()},
    }


def test_contract_on_the_mixed_case():
    report = CASES["mixed"]()
    text = render(report)
    data = json.loads(text)
    assert list(data) == ["findings", "summary"]
    assert [list(item) for item in data["findings"]] == [KEYS] * 4
    assert data["summary"] == {"files": 3, "errors": 2, "warnings": 1, "infos": 1}
    assert all(item["rule"] != "DS210" or item["line"] != 8 or item["column"] != 11 for item in data["findings"])
    assert data == expected(report)
    assert text.endswith("}\n") and text.startswith('{\n  "findings": [')


def test_clean_report():
    report = Report(findings=[], files=0, rules=dict(RULES))
    assert json.loads(render(report)) == {
        "findings": [],
        "summary": {"files": 0, "errors": 0, "warnings": 0, "infos": 0},
    }


def test_non_ascii_is_kept_and_lone_surrogates_are_escaped():
    finding = Finding("DS001", "error", "caf\xe9/\udcff.yaml", 1, 1, "日本 ✓")
    text = render(Report(findings=[finding], files=1, rules=dict(RULES)))
    assert "caf\xe9/\\udcff.yaml" in text and "日本 ✓" in text
    text.encode("utf-8")  # strict: no lone surrogate left in the text
    assert json.loads(text)["findings"][0]["file"] == "caf\xe9/\udcff.yaml"


@FUZZ
@given(reports(surrogates=True))
def test_arbitrary_reports_parse_back_to_the_same_data(report):
    text = render(report)
    text.encode("utf-8")
    assert text.endswith("\n")
    assert json.loads(text) == expected(report)
