from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.reading.yamlsrc import MAX_DEPTH, YamlError, YMap, load_all, locate


def test_positions_of_keys_values_and_items():
    doc = load_all("a: 1\nb:\n  - x\n  - {c: d}\n")[0]
    assert locate(doc, ["a"]) == (1, 4)
    assert locate(doc, ["a"], key=True) == (1, 1)
    assert locate(doc, ["b", 1, "c"]) == (4, 9)
    assert locate(doc, ["b", 1, "c"], key=True) == (4, 6)
    assert locate(doc, ["b", 7]) == (3, 3)  # missing: nearest ancestor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1), ("0x1f", 31), ("017", 15), ("1_000", 1000), ("-3", -3), ("1.5", 1.5), ("1e3", 1000.0),
        ("yes", True), ("Off", False), ("~", None), ("null", None), ("'1'", "1"), ('"yes"', "yes"),
        ("!!str 12", "12"), ("!!int '7'", 7), ("2024-01-01", "2024-01-01"), ("abc", "abc"), ("1:30", "1:30"),
    ],
)  # fmt: skip
def test_scalar_resolution_matches_yaml_1_1(text, expected):
    assert load_all(f"v: {text}\n")[0]["v"] == expected


def test_infinity_and_nan():
    doc = load_all("a: .inf\nb: -.Inf\nc: .nan\n")[0]
    assert doc["a"] == math.inf and doc["b"] == -math.inf and math.isnan(doc["c"])


def test_duplicate_keys_are_recorded_and_last_wins():
    doc = load_all("a: 1\nb: 2\na: 3\n")[0]
    assert doc["a"] == 3
    assert doc.duplicates == [("a", (3, 1))]


def test_merge_keys_and_aliases():
    doc = load_all("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 5\nsame: *b\n")[0]
    assert doc["other"] == {"x": 1, "y": 5}
    assert doc["same"] is doc["base"]


def test_multi_document_stream():
    assert load_all("a: 1\n---\n- 2\n---\n") == [{"a": 1}, [2], None]


def test_syntax_error_has_position():
    with pytest.raises(YamlError) as info:
        load_all("a: [1\nb: 2\n")
    assert (info.value.line, info.value.column) == (2, 2)
    assert info.value.message.startswith("invalid YAML:")


DEEP_BLOCK = "a:\n" + "".join(" " * n + "b:\n" for n in range(1, 5000))


@pytest.mark.parametrize("text", ["[" * 200_000 + "]" * 200_000, DEEP_BLOCK], ids=["flow", "block"])
def test_deep_nesting_is_refused_fast(text):
    """Refused with a position on the first line past the limit, whichever parser layer notices first (libyaml's
    scanner has a flow-depth limit of its own in recent releases; its wording is not desched's contract)."""
    started = time.perf_counter()
    with pytest.raises(YamlError) as refused:
        load_all(text)
    assert time.perf_counter() - started < 10
    assert refused.value.line <= MAX_DEPTH + 1 and refused.value.column >= 1


def test_deep_block_nesting_gets_desched_message_and_exact_position():
    text = "a:\n" + "".join(" " * n + "b:\n" for n in range(1, MAX_DEPTH + 5))
    with pytest.raises(YamlError, match=f"nesting deeper than {MAX_DEPTH} levels") as refused:
        load_all(text)
    assert (refused.value.line, refused.value.column) == (MAX_DEPTH + 1, MAX_DEPTH + 1)


def test_depth_limit_is_exact():
    load_all("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(YamlError):
        load_all("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_alias_bomb_is_refused():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index in range(1, 10):
        prev, name = chr(96 + index), chr(97 + index)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(YamlError, match="alias bomb"):
        load_all("\n".join(lines) + "\n")


def test_undefined_alias():
    with pytest.raises(YamlError):
        load_all("a: *nope\n")


def test_collection_key_is_refused():
    with pytest.raises(YamlError):
        load_all("? [a, b]\n: c\n")


# Letters only: PyYAML (YAML 1.1) and go-yaml disagree on strings such as "1e3", and we follow go-yaml.
words = st.text(alphabet=st.characters(categories=("L", "Zs")), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | words,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(words, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_round_trip_matches_pyyaml(value):
    text = yaml.safe_dump(value)
    assert load_all(text)[0] == yaml.safe_load(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_either_loads_or_raises_yaml_error(text):
    try:
        docs = load_all(text)
    except YamlError as exc:
        assert exc.line >= 1 and exc.column >= 1
    else:
        assert isinstance(docs, list)


def test_ymap_is_a_dict():
    doc = load_all("a: 1\n")[0]
    assert isinstance(doc, YMap) and isinstance(doc, dict) and dict(doc) == {"a": 1}


def test_document_root_counts_nested_duplicates():
    [clean, dirty] = load_all("a: {b: 1}\n---\na: {b: 1, b: 2}\nc: [{d: 1, d: 2}]\n")
    assert clean.nested_duplicates == 0
    assert dirty.nested_duplicates == 2
    assert dirty["a"].nested_duplicates == -1  # only roots know


def test_the_implicit_type_table_is_pyyamls() -> None:
    """desched.reading.yamlnodes writes the YAML 1.1 implicit types out so the fast path never imports PyYAML; the table
    must stay PyYAML's SafeLoader table: the same first characters, types, order and patterns."""
    from yaml.resolver import Resolver

    from desched.reading.yamlnodes import _RESOLVERS

    theirs = Resolver.yaml_implicit_resolvers
    assert set(_RESOLVERS) == set(theirs)
    for first, resolvers in theirs.items():
        assert [tag for tag, _ in _RESOLVERS[first]] == [tag for tag, _ in resolvers], first


@given(st.text(alphabet="0123456789+-._:eEbxoTtZ !&*<=~nulyYsNOfa", max_size=14))
@settings(max_examples=3000, deadline=None)
def test_plain_scalars_resolve_to_the_type_pyyaml_gives(text: str) -> None:
    from yaml.resolver import Resolver

    from desched.reading.yamlnodes import _RESOLVERS

    first = text[:1]
    theirs = [tag for tag, pattern in Resolver.yaml_implicit_resolvers.get(first, ()) if pattern.match(text)]
    assert [tag for tag, pattern in _RESOLVERS.get(first, ()) if pattern().match(text)] == theirs


def test_a_policy_the_fast_scanner_reads_never_imports_pyyaml() -> None:
    code = (
        "import sys\nfrom desched.reading.yamlsrc import load_all\n"
        "load_all('apiVersion: descheduler/v1alpha2\\nkind: DeschedulerPolicy\\nprofiles:\\n- name: p\\n')\n"
        "print(any(m == 'yaml' or m.startswith('yaml.') for m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
