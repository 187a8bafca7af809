"""Helm's value coalescing (desched.chart.values) held to Helm's documented rules: user values over the chart's
defaults, maps merged at every depth, lists replaced whole, a user ``null`` deleting a default key, and several
sources merged in order with the later one winning. Properties over generated values trees, then Helm's own examples
(https://helm.sh/docs/chart_template_guide/values_files/ and helm/helm pkg/chartutil/coalesce_test.go)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from desched.chart.values import coalesce, merge_sources
from desched.reading.yamlsrc import load_all

KEYS = st.sampled_from(["a", "b", "c", "d", "strategies", "profiles"])
SCALARS = st.one_of(st.integers(-3, 3), st.booleans(), st.text("xy", max_size=2))
LEAVES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3))
TREES = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)
MAPS = st.dictionaries(KEYS, TREES, max_size=4)
USER_TREES = st.recursive(
    st.one_of(LEAVES, st.none()), lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)
USER_MAPS = st.dictionaries(KEYS, USER_TREES, max_size=4)


def _expected(user: Any, default: Any) -> Any:
    """Helm's rules as its documentation states them, one case per sentence."""
    if not isinstance(user, dict) or not isinstance(default, dict):
        return user  # the user's value stands: a scalar or a list replaces, a map/non-map clash keeps the user's
    out = {key: value for key, value in user.items() if not (value is None and key in default)}  # null deletes
    for key, value in default.items():
        if key not in user:
            out[key] = value  # a key the user did not set takes the default
        elif user[key] is not None:
            out[key] = _expected(user[key], value)  # maps merge at every depth
    return out


@given(USER_MAPS, MAPS)
def test_user_values_over_chart_defaults_follow_helms_rules(user: dict[str, Any], defaults: dict[str, Any]):
    result = coalesce(user, defaults)
    assert result.values == _expected(user, defaults)


@given(USER_MAPS, MAPS)
def test_the_defaults_reported_are_exactly_the_keys_the_user_did_not_set(user, defaults):
    result = coalesce(user, defaults)
    for path in result.defaults:
        node_user: Any = user
        node_default: Any = defaults
        for part in path[:-1]:
            node_user, node_default = node_user[part], node_default[part]
        assert path[-1] not in node_user and path[-1] in node_default

    # every default key missing from the user's map at any depth is reported
    def missing(u: dict[str, Any], d: dict[str, Any], at: tuple[str, ...]) -> set[tuple[str, ...]]:
        found = {(*at, key) for key in d if key not in u}
        for key, value in d.items():
            if isinstance(value, dict) and isinstance(u.get(key), dict):
                found |= missing(u[key], value, (*at, key))
        return found

    assert result.defaults == missing(user, defaults, ())


@given(MAPS, MAPS)
def test_coalescing_twice_changes_nothing_and_leaves_its_inputs_alone(user, defaults):
    """(For values without nulls: a null deletes a default once, and the defaults fill it in again.)"""
    import copy

    before = copy.deepcopy((user, defaults))
    once = coalesce(user, defaults).values
    assert (user, defaults) == before
    assert coalesce(once, defaults).values == once


@given(MAPS)
def test_no_defaults_leave_the_values_as_they_are_and_no_values_take_every_default(values):
    assert coalesce(values, {}).values == values
    assert coalesce({}, values).values == values


def _merged(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{key: _merged(base.get(key), value) for key, value in over.items()}}
    return over


@given(st.lists(USER_MAPS, max_size=4))
def test_sources_merge_in_order_the_later_winning_and_nulls_kept(sources):
    expected: dict[str, Any] = {}
    for source in sources:
        expected = _merged(expected, source)
    assert merge_sources(sources) == expected


@given(USER_MAPS, USER_MAPS)
def test_a_source_repeated_last_wins_whole(a, b):
    """Not associative (a later scalar cuts an earlier map, a later map then starts afresh), but a source given
    again last decides every key it sets, and merging a source with itself changes nothing."""
    assert merge_sources([a, a]) == a
    again = merge_sources([a, b, b])
    assert again == merge_sources([a, b])


def test_helms_documented_example_a_null_deletes_a_default_and_lists_replace():
    defaults = {
        "livenessProbe": {"httpGet": {"path": "/user/login", "port": "http"}, "initialDelaySeconds": 120},
        "tolerations": [{"key": "a"}],
    }
    user = {"livenessProbe": {"httpGet": None, "exec": {"command": ["cat"]}}, "tolerations": []}
    assert coalesce(user, defaults).values == {
        "livenessProbe": {"exec": {"command": ["cat"]}, "initialDelaySeconds": 120},
        "tolerations": [],
    }


def test_a_null_for_a_key_without_a_default_is_kept():
    assert coalesce({"a": None}, {"b": 1}).values == {"a": None, "b": 1}


def test_positions_the_user_wrote_are_kept_and_defaults_are_placed_at_the_pin():
    (user,) = load_all("strategies:\n  LowNodeUtilization:\n    enabled: true\n")
    defaults = {"strategies": {"LowNodeUtilization": {"params": {"x": 1}}, "RemoveDuplicates": {"enabled": True}}}
    result = coalesce(user, defaults, (9, 3))
    strategies = result.values["strategies"]
    assert strategies.key_pos["LowNodeUtilization"] == (2, 3)
    assert strategies.value_pos["RemoveDuplicates"] == (9, 3)
    assert strategies["RemoveDuplicates"].line == 9
    assert strategies["LowNodeUtilization"].value_pos["enabled"] == (3, 14)
    assert result.defaults == {("strategies", "LowNodeUtilization", "params"), ("strategies", "RemoveDuplicates")}
    assert "RemoveDuplicates" not in user["strategies"]  # the user's tree is not changed


def test_coalesce_copies_the_defaults_unless_they_are_shared():
    defaults = {"resources": {"requests": {"cpu": "500m"}}, "kind": "CronJob"}
    copied = coalesce({"kind": "Deployment"}, defaults).values
    shared = coalesce({"kind": "Deployment"}, defaults, shared=True).values
    assert copied == shared == {"kind": "Deployment", "resources": {"requests": {"cpu": "500m"}}}
    assert copied["resources"] is not defaults["resources"]
    assert shared["resources"] is defaults["resources"]
