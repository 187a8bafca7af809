"""SARIF: what GitHub code scanning needs, a hand-written subset of the SARIF 2.1.0 schema, and URI handling."""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings

from desched.linter.finding import Finding, RuleInfo
from desched.linter.formatters import Report, get
from desched.linter.formatters.sarif import FINGERPRINT_KEY

from .cases import BASE_DIR, CASES, RULES, anchored
from .strategies import FUZZ, reports

render = get("sarif")


def sarif(report: Report) -> Any:
    return json.loads(render(report))


def check_code_scanning_essentials(log: Any, report: Report) -> None:
    """What github/codeql-action/upload-sarif insists on, plus our own promises."""
    assert log["version"] == "2.1.0"
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == sorted(rule_ids) and len(set(rule_ids)) == len(rule_ids)
    assert set(report.rules) <= set(rule_ids)
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    assert "results" in run
    assert len(run["results"]) == len(report.findings)
    for result, finding in zip(run["results"], report.findings, strict=True):
        assert result["ruleId"] in rule_ids
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        uri = location["artifactLocation"]["uri"]
        parts = urlsplit(uri)
        if location["artifactLocation"].get("uriBaseId") == "%SRCROOT%" or uri == "stdin":
            assert not parts.scheme and not parts.netloc and not uri.startswith("/"), uri
        else:
            assert parts.scheme == "file", uri
        assert "\\" not in uri and " " not in uri
        fingerprints = result["partialFingerprints"]
        assert isinstance(fingerprints[FINGERPRINT_KEY], str)
        assert ("suppressions" in result) == (finding.suppressed is not None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_code_scanning_essentials(case):
    report = anchored(CASES[case]())
    check_code_scanning_essentials(sarif(report), report)


def test_clean_report_has_empty_results_and_every_rule():
    log = sarif(anchored(CASES["clean"]()))
    run = log["runs"][0]
    assert run["results"] == []
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == sorted(RULES)


def test_rule_descriptors_carry_the_metadata():
    rules = {rule["id"]: rule for rule in sarif(CASES["clean"]())["runs"][0]["tool"]["driver"]["rules"]}
    rule = rules["DS105"]
    info = RULES["DS105"]
    assert rule["name"] == info.name
    assert rule["shortDescription"]["text"] == info.summary
    assert rule["fullDescription"]["text"] == info.rationale
    assert info.remediation in rule["help"]["text"] and info.rationale in rule["help"]["text"]
    assert info.remediation in rule["help"]["markdown"] and info.rationale in rule["help"]["markdown"]
    assert rule["defaultConfiguration"]["level"] == "note"
    assert rule["properties"]["tags"] == ["descheduler"]
    assert rule["helpUri"].endswith("docs/rules.md#ds105")


def test_suppressed_findings_are_included_with_their_reason():
    results = sarif(anchored(CASES["mixed"]()))["runs"][0]["results"]
    suppressed = [result for result in results if "suppressions" in result]
    assert len(results) == 5
    assert [result["suppressions"] for result in suppressed] == [
        [{"kind": "inSource", "justification": "scratch data only, reviewed in #42"}]
    ]


def test_logical_locations_name_the_object_and_the_pointer():
    results = sarif(anchored(CASES["special_message"]()))["runs"][0]["results"]
    assert results[1]["locations"][0]["logicalLocations"] == [
        {"name": "ConfigMap ns-a/desched,v2:beta", "kind": "resource"},
        {
            "name": "a/b",
            "fullyQualifiedName": "ConfigMap ns-a/desched,v2:beta/profiles/0/pluginConfig/0/args/a~1b",
            "kind": "property",
        },
    ]
    assert "logicalLocations" not in results[0]["locations"][0]


def test_unregistered_rule_gets_a_descriptor():
    finding = Finding("DS777", "info", "a.yaml", 0, 0, "")
    log = sarif(Report(findings=[finding], files=1, rules=dict(RULES), base_dir=os.getcwd()))
    result = log["runs"][0]["results"][0]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[result["ruleIndex"]]["id"] == "DS777"
    assert result["level"] == "note"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}


def _fingerprint(report: Report, index: int = 0) -> Any:
    return sarif(report)["runs"][0]["results"][index]["partialFingerprints"][FINGERPRINT_KEY]


def test_fingerprints_survive_moved_lines_and_tell_duplicates_apart():
    finding = Finding("DS302", "error", "p.yaml", 12, 9, "too high", path="/profiles/0")

    def report(*found: Finding) -> Report:
        return Report(findings=list(found), files=1, rules=dict(RULES), base_dir=os.getcwd())

    original = _fingerprint(report(finding))
    assert _fingerprint(report(finding._replace(line=40, column=3))) == original
    assert _fingerprint(report(finding._replace(message="other"))) != original
    assert _fingerprint(report(finding._replace(path="/profiles/1"))) != original
    assert _fingerprint(report(finding._replace(rule="DS001"))) != original
    assert _fingerprint(report(finding._replace(file="q.yaml"))) != original
    twice = report(finding, finding._replace(line=13))
    assert _fingerprint(twice, 0) == original
    assert _fingerprint(twice, 1) != original


def _uri(file: str, base_dir: str) -> Any:
    finding = Finding("DS001", "error", file, 1, 1, "m")
    log = sarif(Report(findings=[finding], files=1, rules=dict(RULES), base_dir=base_dir))
    return log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]


def test_uris_are_relative_to_base_dir_and_percent_encoded(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    base = str(tmp_path)
    assert _uri("my policy ü.yaml", base) == {"uri": "sub/my%20policy%20%C3%BC.yaml", "uriBaseId": "%SRCROOT%"}
    assert _uri("./a/../b#1?.yaml", base) == {"uri": "sub/b%231%3F.yaml", "uriBaseId": "%SRCROOT%"}
    assert _uri(os.path.join(base, "x.yaml"), base) == {"uri": "x.yaml", "uriBaseId": "%SRCROOT%"}
    assert _uri("-", base) == {"uri": "stdin"}
    assert _uri("c:d.yaml", base)["uri"] == "sub/c%3Ad.yaml"  # never mistaken for a scheme
    assert _uri("bad\udcff.yaml", base)["uri"] == "sub/bad%FF.yaml"  # the original byte


def test_files_outside_base_dir_get_absolute_file_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    location = _uri("other dir/p.yaml", str(tmp_path / "repo"))
    assert "uriBaseId" not in location
    assert location["uri"].startswith("file:///")
    assert unquote(urlsplit(location["uri"]).path) == str(tmp_path / "other dir" / "p.yaml")


def test_base_uri_is_absolute_with_a_trailing_slash():
    log = sarif(Report(findings=[], files=0, rules={}, base_dir=BASE_DIR))
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///srv/repo/"}}


@FUZZ
@given(reports(surrogates=True))
def test_arbitrary_reports_keep_the_essentials(report):
    for base_dir in (report.base_dir, os.getcwd()):  # files mostly outside, then mostly inside base_dir
        report.base_dir = base_dir
        text = render(report)
        text.encode("utf-8")
        check_code_scanning_essentials(json.loads(text), report)


# A subset of the SARIF 2.1.0 schema (https://docs.oasis-open.org/sarif/sarif/v2.1.0/), written by hand because the
# network is not available: the objects we emit, with the spec's property names (the official schema forbids
# unknown properties almost everywhere, so a typo is caught), required members and enums.
def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "properties": {"$ref": "#/definitions/propertyBag"}},
        "required": list(required),
        "additionalProperties": False,
    }


_STRING = {"type": "string"}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
SARIF_SUBSET_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
        "propertyBag": {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": _STRING, "uniqueItems": True}},
        },
        "message": _object({"text": _STRING, "markdown": _STRING, "id": _STRING}, ("text",)),
        "multiformatMessageString": _object({"text": _STRING, "markdown": _STRING}, ("text",)),
        "artifactLocation": _object(
            {"uri": _STRING, "uriBaseId": _STRING, "index": {"type": "integer"}, "description": {}}
        ),
        "region": _object(
            {
                "startLine": {"type": "integer", "minimum": 1},
                "startColumn": {"type": "integer", "minimum": 1},
                "endLine": {"type": "integer", "minimum": 1},
                "endColumn": {"type": "integer", "minimum": 1},
            }
        ),
        "logicalLocation": _object(
            {
                "name": _STRING,
                "index": {"type": "integer"},
                "fullyQualifiedName": _STRING,
                "decoratedName": _STRING,
                "parentIndex": {"type": "integer"},
                "kind": _STRING,
            }
        ),
        "location": _object(
            {
                "id": {"type": "integer"},
                "physicalLocation": _object(
                    {
                        "artifactLocation": {"$ref": "#/definitions/artifactLocation"},
                        "region": {"$ref": "#/definitions/region"},
                        "contextRegion": {"$ref": "#/definitions/region"},
                    },
                    ("artifactLocation",),
                ),
                "logicalLocations": {"type": "array", "items": {"$ref": "#/definitions/logicalLocation"}},
                "message": {"$ref": "#/definitions/message"},
            }
        ),
        "reportingDescriptor": _object(
            {
                "id": _STRING,
                "name": _STRING,
                "shortDescription": {"$ref": "#/definitions/multiformatMessageString"},
                "fullDescription": {"$ref": "#/definitions/multiformatMessageString"},
                "help": {"$ref": "#/definitions/multiformatMessageString"},
                "helpUri": {"type": "string", "format": "uri"},
                "defaultConfiguration": _object({"enabled": {"type": "boolean"}, "level": _LEVEL, "rank": {}}),
            },
            ("id",),
        ),
        "result": _object(
            {
                "ruleId": _STRING,
                "ruleIndex": {"type": "integer", "minimum": -1},
                "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"]},
                "level": _LEVEL,
                "message": {"$ref": "#/definitions/message"},
                "locations": {"type": "array", "items": {"$ref": "#/definitions/location"}},
                "partialFingerprints": {"type": "object", "additionalProperties": _STRING},
                "fingerprints": {"type": "object", "additionalProperties": _STRING},
                "suppressions": {
                    "type": "array",
                    "items": _object(
                        {
                            "guid": _STRING,
                            "kind": {"enum": ["inSource", "external"]},
                            "status": {"enum": ["accepted", "underReview", "rejected"]},
                            "justification": _STRING,
                        },
                        ("kind",),
                    ),
                },
            },
            ("message",),
        ),
    },
    **_object(
        {
            "$schema": {"type": "string", "format": "uri"},
            "version": {"enum": ["2.1.0"]},
            "runs": {
                "type": "array",
                "minItems": 1,
                "items": _object(
                    {
                        "tool": _object(
                            {
                                "driver": _object(
                                    {
                                        "name": {"type": "string", "minLength": 1},
                                        "informationUri": {"type": "string", "format": "uri"},
                                        "version": _STRING,
                                        "semanticVersion": _STRING,
                                        "rules": {
                                            "type": "array",
                                            "items": {"$ref": "#/definitions/reportingDescriptor"},
                                        },
                                    },
                                    ("name",),
                                ),
                            },
                            ("driver",),
                        ),
                        "originalUriBaseIds": {
                            "type": "object",
                            "additionalProperties": {"$ref": "#/definitions/artifactLocation"},
                        },
                        "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                        "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
                    },
                    ("tool",),
                ),
            },
        },
        ("version", "runs"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_valid_against_the_sarif_subset_schema(case):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA)
    validator.check_schema(SARIF_SUBSET_SCHEMA)
    errors = sorted(validator.iter_errors(sarif(anchored(CASES[case]()))), key=str)
    assert not errors, "\n".join(f"{list(error.absolute_path)}: {error.message}" for error in errors)


def test_the_subset_schema_rejects_what_github_would():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA)
    log = sarif(anchored(CASES["mixed"]()))
    assert validator.is_valid(log)
    result = log["runs"][0]["results"][0]
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert not validator.is_valid(log)
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 1
    result["level"] = "info"
    assert not validator.is_valid(log)
    result["level"] = "note"
    result["startColumn"] = 1  # misplaced member
    assert not validator.is_valid(log)


@settings(parent=FUZZ, max_examples=50)
@given(reports())
def test_arbitrary_reports_match_the_subset_schema(report):
    jsonschema = pytest.importorskip("jsonschema")
    assert jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).is_valid(json.loads(render(report)))


def test_rule_info_without_text_still_yields_a_valid_descriptor():
    jsonschema = pytest.importorskip("jsonschema")
    bare = {"DS050": RuleInfo("DS050", "", "", "", "", "warning")}
    log = sarif(Report(findings=[], files=0, rules=bare, base_dir=BASE_DIR))
    assert jsonschema.Draft7Validator(SARIF_SUBSET_SCHEMA).is_valid(log)
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["name"] == "DS050"
