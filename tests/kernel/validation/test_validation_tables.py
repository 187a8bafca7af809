"""Upstream's validation test tables, ported as data (tables/*.yaml), run against desched.validation.

Each table holds one upstream test function at one tag: ``kind: args`` tables call ``validate_args`` for ``plugin``;
``kind: policy`` tables rebuild phase C of ``validateDeschedulerConfiguration`` from ``validate_args`` and
``validate_policy``. ``match: prefix`` compares only the descheduler-owned prefix of a label-selector error (the rest
is apimachinery's text, which changes between releases; docs/policy-api.md#9-upstream-tests-ported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.plugins import validate_args
from desched.validation import aggregate, render_policy_errors, validate_policy

TABLES = Path(__file__).parent / "tables"
LABEL_PREFIX = "failed to get label selectors from strategy's params:"


def _load() -> list[Any]:
    params = []
    for table_path in sorted(TABLES.glob("*.yaml")):
        table = yaml.safe_load(table_path.read_text(encoding="utf-8"))
        for case in table["cases"]:
            case_id = f"{table_path.stem}::{case['description']}"
            params.append(pytest.param(table, case, id=case_id))
    return params


def _policy_error(policy: dict[str, Any], target: int) -> str | None:
    """Phase C as upstream renders it: "in profile <p>: <plugin aggregate>" per failing pluginConfig, then the
    policy-level messages, all in one aggregate (v0.27 chained profile errors with fmt.Errorf("%w: %s") instead)."""
    messages = []
    pairs = []
    for profile in policy.get("profiles") or []:
        for config in profile.get("pluginConfig") or []:
            errors = validate_args(config["name"], config.get("args"), target)
            if errors:
                text = aggregate([error.message for error in errors])
                messages.append(f"in profile {profile['name']}: {text}")
                pairs.append((profile["name"], text))
    policy_messages = [error.message for error in validate_policy(policy, target)]
    rendered = ": ".join(messages) if target <= 27 else aggregate(messages + policy_messages)
    assert rendered == render_policy_errors(pairs, policy_messages, target)
    return rendered or None


@pytest.mark.parametrize(("table", "case"), _load())
def test_upstream_table(table: dict[str, Any], case: dict[str, Any]) -> None:
    target = case["target"]
    if table["kind"] == "args":
        errors = validate_args(table["plugin"], case["args"], target)
        actual = aggregate([error.message for error in errors]) or None
    else:
        actual = _policy_error(case["policy"], target)
    expected = case["error"]
    if case.get("match") == "prefix":
        assert expected.startswith(LABEL_PREFIX)
        assert actual is not None and actual.startswith(LABEL_PREFIX), actual
        assert "Invalid value" in actual
    else:
        assert actual == expected


def test_table_sizes_match_upstream() -> None:
    """The number of cases per ported table, as counted in upstream's source
    (docs/policy-api.md#9-upstream-tests-ported)."""
    sizes = {
        path.stem: len(yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]) for path in TABLES.glob("*.yaml")
    }
    assert sizes == {
        "defaultevictor": 18,
        "lownodeutilization": 13,
        "highnodeutilization": 10,
        "podlifetime": 6,
        "podlifetime_v0.34": 6,
        "podlifetime_v0.33": 4,
        "podlifetime_v0.30": 4,
        "podlifetime_v0.27": 3,
        "removeduplicates": 2,
        "removefailedpods": 4,
        "removepodshavingtoomanyrestarts": 5,
        "removepodshavingtoomanyrestarts_v0.33": 4,
        "removepodsviolatinginterpodantiaffinity": 4,
        "removepodsviolatingnodeaffinity": 5,
        "removepodsviolatingnodeaffinity_v0.33": 3,
        "removepodsviolatingnodetaints": 6,
        "removepodsviolatingnodetaints_v0.33": 6,
        "removepodsviolatingtopologyspreadconstraint": 6,
        "policyconfig_validate": 10,
        "policyconfig_validate_v0.33": 11,
        "policyconfig_validate_v0.27": 1,
        "policyconfig_decode_defaults": 10,
    }
