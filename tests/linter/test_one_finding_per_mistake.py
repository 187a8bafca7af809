"""One mistake, one finding: a rule stays silent about what another rule already names as its cause (issue 37)."""

from __future__ import annotations

import pytest

from desched.linter.engine import Settings, lint_text

MISSPELT = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
{key}:
- name: default
  pluginConfig:
  - name: RemoveDuplicates
  plugins:
    balance:
      enabled: [RemoveDuplicates]
"""


def _rules(text: str) -> list[str]:
    return sorted(finding.rule for finding in lint_text("policy.yaml", text, Settings()).findings)


@pytest.mark.parametrize("key", ["profile", "Profiles", "profils"])
def test_a_misspelt_profiles_key_is_one_ds003_and_no_ds207(key: str):
    assert _rules(MISSPELT.format(key=key)) == ["DS003"]


def test_a_policy_without_profiles_and_without_a_misspelling_still_gets_ds207():
    assert _rules("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n") == ["DS207"]
    assert _rules(MISSPELT.format(key="workloads")) == ["DS003", "DS207"]  # an unknown key, and no profiles


def test_the_structure_checker_names_the_key_an_unknown_one_is_closest_to():
    from desched.plugins import REGISTRY
    from desched.policy.structure import check_structure

    problems = check_structure({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profile": []}, 36,
                               registry=REGISTRY)  # fmt: skip
    assert [(p.code, p.path, p.suggestion) for p in problems] == [("unknown-key", ("profile",), "profiles")]
