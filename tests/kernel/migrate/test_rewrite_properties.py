"""Properties of ``migrate_text`` on generated v1alpha1 policies in many layouts, with comments anywhere."""

from __future__ import annotations

import re

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desched.migrate.rewrite import migrate_text
from desched.reading.yamlsrc import load_all

_PARAMS = {
    "RemoveDuplicates": {"removeDuplicates": {"excludeOwnerKinds": ["Job"]}, "namespaces": {"exclude": ["a", "b"]}},
    "LowNodeUtilization": {
        "nodeResourceUtilizationThresholds": {
            "thresholds": {"cpu": 20, "memory": 20},
            "targetThresholds": {"cpu": 50, "memory": 50},
        }
    },
    "PodLifeTime": {"podLifeTime": {"maxPodLifeTimeSeconds": 3600, "states": ["Pending"]}},
    "RemovePodsViolatingNodeTaints": {"excludedTaints": ["dedicated=x"], "nodeFit": True},
    "RemoveFailedPods": {"failedPods": {"reasons": ["NodeAffinity"], "minPodLifetimeSeconds": 60}},
    "RemovePodsViolatingNodeAffinity": {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]},
}


class _Indented(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


@st.composite
def policies(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(sorted(_PARAMS)), min_size=1, max_size=4, unique=True))
    strategies = {}
    for name in names:
        entry: dict[str, object] = {"enabled": draw(st.booleans()) or name == names[0]}
        if draw(st.booleans()):
            entry["weight"] = draw(st.integers(0, 9))
        if draw(st.booleans()) or name not in ("RemoveDuplicates", "RemovePodsViolatingNodeTaints"):
            entry["params"] = _PARAMS[name]  # the others need their params to pass validation
        strategies[name] = entry
    policy: dict[str, object] = {"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy"}
    if draw(st.booleans()):
        policy["evictLocalStoragePods"] = True
    if draw(st.booleans()):
        policy["maxNoOfPodsToEvictPerNode"] = draw(st.integers(1, 9))
    policy["strategies"] = strategies
    indent = draw(st.sampled_from([2, 4]))
    dumper = draw(st.sampled_from([yaml.SafeDumper, _Indented]))
    flow = draw(st.sampled_from([False, None]))
    text = yaml.dump(policy, Dumper=dumper, sort_keys=False, indent=indent, default_flow_style=flow)
    lines = []
    for number, line in enumerate(text.splitlines()):
        depth = len(line) - len(line.lstrip())
        if draw(st.integers(0, 9)) == 0:
            lines.append(" " * draw(st.sampled_from([0, depth, depth + 2])) + f"# comment {number}")
        lines.append(line + (f"  # note {number}" if draw(st.integers(0, 9)) == 0 else ""))
        if draw(st.integers(0, 19)) == 0:
            lines.append("")
    return "\n".join(lines) + "\n"


def _comments(text: str) -> list[str]:
    return re.findall(r"# (?:comment|note) \d+", text)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies(), st.sampled_from([None, 33]), st.booleans())
def test_migration_is_complete_final_and_loses_no_comment(text, target, merge):
    result = migrate_text("p.yaml", text, target=target, merge_profiles=merge)
    assert not result.errors
    assert result.changed
    [doc] = load_all(result.text)
    assert doc["apiVersion"] == "descheduler/v1alpha2" and "strategies" not in doc
    assert sorted(_comments(result.text)) == sorted(_comments(text))
    again = migrate_text("p.yaml", result.text, target=target, merge_profiles=merge)
    assert again.text == result.text and not again.changed
