"""``labels.Parse`` and ``LabelSelectorAsSelector`` as ported in desched.validation.labels."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from desched.validation import label_selector_error, parse_label_selector_string
from desched.validation.labels import is_label_key, is_label_value

TABLES = Path(__file__).parent / "tables"
_KEY_REGEX_TEXT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyName',  or 'my.name',  or '123-abc', "
    "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    "text",
    [
        "a=b",
        "a==b,c!=d",
        "env in (a,b)",
        "!x",
        "x",
        "a notin (b)",
        "",
        "  a = b ,  c  ",
        "x in ()",
        "x in (,)",
        "x in (a,,b)",
        "x in (in, notin)",
        "example.com/app=web",
        "a=",
        "a>5",
        "a<3",
        "a/b",
    ],
)
def test_parse_valid(text: str) -> None:
    assert parse_label_selector_string(text) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("in (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("@@=x", 'unable to parse requirement: <nil>: Invalid value: "@@": name part ' + _KEY_REGEX_TEXT),
        ("a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a!b", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        (
            "a>b",
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must "
            "be an integer",
        ),
    ],
)
def test_parse_invalid(text: str, message: str) -> None:
    assert parse_label_selector_string(text) == message


def test_parse_rejects_bad_values_with_apimachinery_path() -> None:
    message = parse_label_selector_string("app=a b,c")
    assert message == "found 'b', expected: ',' or 'end of string'"
    message = parse_label_selector_string("app=-x")
    assert message is not None
    assert message.startswith('unable to parse requirement: values[0][app]: Invalid value: "-x": a valid label must be')
    # a negative number is an integer but not a label value, so "Lt -3" cannot be written
    message = parse_label_selector_string("a<-3")
    assert message is not None
    assert message.startswith('unable to parse requirement: values[0][a]: Invalid value: "-3": a valid label must be')


def test_parse_double_comma_changed_in_v035() -> None:
    # apimachinery up to v0.34 consumed the second comma of ",," and then choked on ")".
    assert parse_label_selector_string("x in (a,,)", target=35) is None
    assert parse_label_selector_string("x in (a,,)", target=34) == (
        "unable to parse requirement: found ')', expected: ',', or identifier"
    )


def test_key_and_value_rules() -> None:
    assert is_label_key("example.com/name") == []
    assert is_label_key("a" * 63) == []
    assert is_label_key("a" * 64) == ["name part must be no more than 63 bytes"]
    assert is_label_key("a" * 64, target=34) == ["name part must be no more than 63 characters"]
    assert is_label_key("/name") == ["prefix part must be non-empty"]
    assert is_label_key("Example.com/name")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    assert is_label_key("a/b/c")[0].startswith("a valid label key must consist of")
    assert is_label_key("a/b/c", target=34)[0].startswith("a qualified name must consist of")
    assert is_label_key("")[0] == "name part must be non-empty"
    assert is_label_key("é") == ["name part " + _KEY_REGEX_TEXT]
    assert is_label_value("") == []
    assert is_label_value("a" * 64)[0] == "must be no more than 63 bytes"
    assert is_label_value("ok\n") != []


def test_selector_valid() -> None:
    assert label_selector_error(None) is None
    assert label_selector_error({}) is None
    assert label_selector_error({"matchLabels": {"role.kubernetes.io/node": ""}}) is None
    assert (
        label_selector_error(
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["a", "b"]},
                    {"key": "legacy", "operator": "DoesNotExist"},
                ],
            }
        )
        is None
    )


def test_selector_operator_rules() -> None:
    assert label_selector_error({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}) == (
        '"Gt" is not a valid label selector operator'
    )
    assert label_selector_error({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}) == (
        'values: Invalid value: ["x"]: values set must be empty for exists and does not exist'
    )
    assert label_selector_error({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]}) == (
        "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    )
    assert label_selector_error({"matchExpressions": [{"key": "a", "operator": "NotIn"}]}, target=33) == (
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    )
    assert label_selector_error({"matchLabels": {"app": "bad value"}}) == (
        'values[0][app]: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )


def _label_cases() -> list[tuple[str, int, object, str]]:
    cases = []
    for path in sorted(TABLES.glob("*.yaml")):
        table = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in table["cases"]:
            if case.get("match") == "prefix":
                cases.append((path.stem, case["target"], case["args"]["labelSelector"], case["error"]))
    return cases


@pytest.mark.parametrize(("table", "target", "selector", "expected"), _label_cases())
def test_label_texts_match_the_vendored_apimachinery(table: str, target: int, selector: object, expected: str) -> None:
    """Beyond the prefix the tables compare, the full text matches the apimachinery vendored by that release."""
    text = label_selector_error(selector, target)
    assert text is not None
    assert "failed to get label selectors from strategy's params: " + text == expected
