"""desched.tree: the lenient readers every model shares, and TextEnum's promise that a member is its text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desched.gitops.documents import Shape
from desched.tree import TextEnum, at_path, list_or_empty, mapping_or_empty, same_namespace, strings
from desched.workloads.eviction import Check

TREE = {"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}, "list": [[1, 2], {"k": None}]}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((), TREE),
        (("spec", "template", "spec", "containers", 1, "name"), "b"),
        (("list", 0, 1), 2),
        (("list", 1, "k"), None),  # present and null reads as missing
        (("spec", "missing", "x"), None),
        (("list", 2), None),  # an index past the end
        (("list", -1), None),  # no Python negative indexing
        (("spec", 0), None),  # an index into a mapping
        (("list", "0"), None),  # a key into a list
    ],
)
def test_at_path(path: tuple[str | int, ...], expected: Any) -> None:
    assert at_path(TREE, path) == expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=12,
)


@given(json_values, st.lists(st.text(max_size=2) | st.integers(-1, 3), max_size=4))
def test_at_path_never_raises_and_follows_every_step(tree: Any, path: list[str | int]) -> None:
    found = at_path(tree, tuple(path))
    if path and found is not None:
        parent = at_path(tree, tuple(path[:-1]))
        assert parent[path[-1]] is found


@pytest.mark.parametrize("value", [None, "x", 1, [], ["a"], 0.5, True])
def test_mapping_or_empty_reads_anything_but_a_dict_as_empty(value: Any) -> None:
    assert mapping_or_empty(value) == {}
    mine = {"a": 1}
    assert mapping_or_empty(mine) is mine  # the same object, not a copy


@pytest.mark.parametrize("value", [None, "x", 1, {}, {"a": 1}, (1, 2)])
def test_list_or_empty_reads_anything_but_a_list_as_empty(value: Any) -> None:
    assert list_or_empty(value) == []
    mine = [1]
    assert list_or_empty(mine) is mine


def test_strings_keeps_the_strings_of_a_list_in_order() -> None:
    assert strings(["b", 1, None, "a", ["c"]]) == ["b", "a"]
    assert strings("ab") == []
    assert strings({"a": "b"}) == []


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [("a", "a", True), ("a", "b", False), (None, "b", True), ("a", None, True), (None, None, True)],
)
def test_same_namespace_treats_an_unset_namespace_as_any(left: str | None, right: str | None, same: bool) -> None:
    assert same_namespace(left, right) is same


class Colour(TextEnum):
    RED = "red"


@pytest.mark.parametrize("member", [Colour.RED, Shape.HELM, Check.PVC_NO_CLASS])
def test_a_text_enum_member_is_its_text_everywhere_it_reaches_an_output(member: TextEnum) -> None:
    text = member.value
    assert member == text and hash(member) == hash(text)
    assert str(member) == text and f"{member}" == text and f"{member:>12}" == f"{text:>12}"
    assert json.dumps({"shape": member}) == json.dumps({"shape": text})
    assert type(member)(text) is member
