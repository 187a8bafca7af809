from __future__ import annotations

import pytest

from desched.linter.config import ConfigError, discover, load
from tests.conftest import lint

POLICY = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 45}  {directive_same}
      {directive_own}
      targetThresholds: {cpu: 50}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
"""


def render(same: str = "", own: str = "") -> str:
    return POLICY.replace("{directive_same}", same).replace("{directive_own}", own)


def active(findings, rule):
    return [f for f in findings if f.rule == rule and f.suppressed is None]


def test_band_warning_is_reported_without_directive():
    assert active(lint(render()), "DS305")


def test_own_line_directive_applies_to_next_line_with_reason():
    findings = lint(render(own="# desched: disable=DS305 nodes are uniform"))
    assert not active(findings, "DS305")
    [suppressed] = [f for f in findings if f.rule == "DS305"]
    assert suppressed.suppressed == "nodes are uniform"


def test_trailing_directive_on_another_line_does_not_apply():
    assert active(lint(render(same="# desched: disable=DS305")), "DS305")


def test_file_directive_and_rule_names():
    text = "# desched: disable-file=narrow-threshold-band accepted\n" + render()
    assert not active(lint(text), "DS305")
    text = "# desched: disable-file=all\n" + render()
    assert not [f for f in lint(text) if f.suppressed is None]


def test_config_file_discovery_and_settings(tmp_path):
    (tmp_path / ".git").mkdir()
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    (tmp_path / ".desched.yaml").write_text(
        "target-version: v0.33\nignore: [vendor]\nstrict: true\n"
        "rules:\n  DS305: disable\n  DS311: {severity: error, min-seconds: 120}\n  DS204: info\n"
    )
    path = discover(str(nested))
    assert path == str(tmp_path / ".desched.yaml")
    config = load(path)
    assert config.target == 33 and config.ignore == ["vendor"] and config.strict
    assert config.disabled == {"DS305"}
    assert config.severities == {"DS311": "error", "DS204": "info"}
    assert config.options == {"DS311": {"min-seconds": 120}}


def test_pyproject_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.desched]\ntarget-version = "v0.34"\n')
    assert load(discover(str(tmp_path))).target == 34


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: {DS999: error}\n", "no such rule"),
        ("rules: {DS305: loud}\n", "expected one of"),
        ("rules: {DS305: {min-band: ten}}\n", "expected int"),
        ("rules: {DS305: {bogus: 1}}\n", "unknown option"),
        ("target-version: v9\n", "invalid descheduler version"),
        ("colour: true\n", "unknown key"),
        ("- a\n", "must be a mapping"),
        ("a: [\n", "cannot read configuration"),
    ],
)
def test_invalid_configuration_is_reported_with_the_file(tmp_path, text, message):
    path = tmp_path / ".desched.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load(str(path))
    assert str(path) in str(info.value)


def test_rule_options_change_behaviour():
    assert active(lint(render(), options={"DS305": {"min-band": 3}}), "DS305") == []
