"""Label selector matching against the full operator table (Kubernetes ``LabelSelectorAsSelector`` semantics)."""

from __future__ import annotations

import pytest

from desched.workloads.selectors import compile_selector, label_map, matches

WEB = {"app": "web", "tier": "frontend"}


def expr(key, operator, *values):
    item = {"key": key, "operator": operator}
    if values:
        item["values"] = list(values)
    return {"matchExpressions": [item]}


CASES = [
    # (description, selector, labels, expected)
    ("In: value listed", expr("app", "In", "web", "api"), WEB, True),
    ("In: value not listed", expr("app", "In", "db"), WEB, False),
    ("In: key absent", expr("zone", "In", "a"), WEB, False),
    ("NotIn: value listed", expr("app", "NotIn", "web"), WEB, False),
    ("NotIn: value not listed", expr("app", "NotIn", "db"), WEB, True),
    ("NotIn: key absent matches", expr("zone", "NotIn", "a"), WEB, True),
    ("Exists: present", expr("app", "Exists"), WEB, True),
    ("Exists: absent", expr("zone", "Exists"), WEB, False),
    ("Exists: present with empty value", expr("flag", "Exists"), {"flag": ""}, True),
    ("DoesNotExist: absent", expr("zone", "DoesNotExist"), WEB, True),
    ("DoesNotExist: present", expr("app", "DoesNotExist"), WEB, False),
    ("matchLabels: equal", {"matchLabels": {"app": "web"}}, WEB, True),
    ("matchLabels: different value", {"matchLabels": {"app": "db"}}, WEB, False),
    ("matchLabels: key absent", {"matchLabels": {"zone": "a"}}, WEB, False),
    ("matchLabels: all pairs required", {"matchLabels": {"app": "web", "tier": "backend"}}, WEB, False),
    (
        "matchLabels AND expressions: both hold",
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}],
        },
        WEB,
        True,
    ),
    (
        "matchLabels AND expressions: expression fails",
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["frontend"]}],
        },
        WEB,
        False,
    ),
    (
        "matchLabels AND expressions: label fails",
        {"matchLabels": {"app": "db"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        WEB,
        False,
    ),
    (
        "several expressions are ANDed",
        {"matchExpressions": [{"key": "app", "operator": "Exists"}, {"key": "zone", "operator": "Exists"}]},
        WEB,
        False,
    ),
    ("empty selector matches everything", {}, WEB, True),
    ("empty selector matches no labels", {}, {}, True),
    ("empty lists are an empty selector", {"matchLabels": {}, "matchExpressions": []}, WEB, True),
    ("invalid: In without values", expr("app", "In"), WEB, False),
    ("invalid: Exists with values", expr("app", "Exists", "web"), WEB, False),
    ("invalid: unknown operator", expr("app", "Equals", "web"), WEB, False),
    ("invalid: bad key", {"matchLabels": {"-bad-": "x"}}, {"-bad-": "x"}, False),
    ("invalid: bad value", {"matchLabels": {"app": "not valid!"}}, {"app": "not valid!"}, False),
    ("invalid: not a mapping", ["app"], WEB, False),
    ("invalid: non-string label value", {"matchLabels": {"replicas": 3}}, WEB, False),
]


@pytest.mark.parametrize(("selector", "labels", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_operator_table(selector, labels, expected):
    assert matches(selector, labels, nil_matches=False) is expected
    assert matches(selector, labels, nil_matches=True) is expected


@pytest.mark.parametrize("nil_matches", [False, True])
def test_nil_selector(nil_matches):
    assert matches(None, WEB, nil_matches=nil_matches) is nil_matches
    assert matches(None, {}, nil_matches=nil_matches) is nil_matches


def test_compiled_kinds_and_index_pairs():
    assert compile_selector(None, nil_matches=False).kind == "nil"
    assert compile_selector({}, nil_matches=False).kind == "empty"
    assert compile_selector(expr("app", "In"), nil_matches=False).kind == "invalid"
    compiled = compile_selector({"matchLabels": {"app": "web", "tier": "x"}}, nil_matches=False)
    assert compiled.kind == "normal"
    assert compiled.match_labels == (("app", "web"), ("tier", "x"))


def test_null_match_label_value_is_the_empty_string():
    assert matches({"matchLabels": {"flag": None}}, {"flag": ""}, nil_matches=False)
    assert not matches({"matchLabels": {"flag": None}}, {}, nil_matches=False)


def test_label_map_keeps_string_pairs_only():
    assert label_map({"a": "1", "b": 2, 3: "c", "d": None}) == {"a": "1"}
    assert label_map(["a"]) == {}
