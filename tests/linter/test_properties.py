"""Open-ended input: whatever shape a policy takes, linting never crashes and every finding has a real position."""

from __future__ import annotations

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desched.plugins import REGISTRY
from tests.conftest import lint

BASE = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "p",
            "pluginConfig": [{"name": name, "args": {}} for name in sorted(REGISTRY)],
            "plugins": {
                "balance": {"enabled": ["LowNodeUtilization", "RemoveDuplicates"]},
                "deschedule": {"enabled": ["PodLifeTime"]},
            },
        }
    ],
}

keys = st.sampled_from(
    sorted(
        {key for args in (plugin.args for plugin in REGISTRY.values()) for key in args.fields}
        | {"profiles", "plugins", "pluginConfig", "x"}
    )
)
scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8)
values = st.recursive(
    scalars | st.sampled_from(sorted(REGISTRY)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=12,
)


def _containers(node, out):
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            _containers(value, out)
    elif isinstance(node, list):
        out.append(node)
        for value in node:
            _containers(value, out)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_mutations_never_crash_and_findings_are_placed(data):
    policy = copy.deepcopy(BASE)
    for _ in range(data.draw(st.integers(1, 4))):
        target = data.draw(st.sampled_from(_containers(policy, [])))
        value = data.draw(values)
        if isinstance(target, dict):
            target[data.draw(keys)] = value
        elif target:
            target[data.draw(st.integers(0, len(target) - 1))] = value
    text = yaml.safe_dump(policy, sort_keys=False)
    lines = text.splitlines()
    for finding in lint(text):
        assert 1 <= finding.line <= len(lines) + 1, finding
        assert finding.column >= 1, finding
        assert finding.message and finding.rule.startswith("DS")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_is_linted_without_exceptions(text):
    for finding in lint(text):
        assert finding.line >= 1 and finding.column >= 1
