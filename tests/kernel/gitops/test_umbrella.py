"""desched.gitops.umbrella: where an umbrella chart hands the descheduler chart its values, and when its condition turns
the subchart off (Helm's ``ProcessDependencies``: alias else name; the first condition path set to a boolean
decides)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.gitops.umbrella import Dependency, dependency_beside, enabled

REPOSITORY = "https://kubernetes-sigs.github.io/descheduler/"


def _chart(directory: Path, chart: str, requirements: str | None = None) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Chart.yaml").write_text(chart)
    if requirements is not None:
        (directory / "requirements.yaml").write_text(requirements)
    values = directory / "values.yaml"
    values.write_text("descheduler: {}\n")
    return str(values)


@pytest.mark.parametrize(
    ("entry", "key", "condition"),
    [
        (f"- name: descheduler\n  version: 0.30.1\n  repository: {REPOSITORY}\n", "descheduler", None),
        (
            f"- name: descheduler\n  alias: tidy\n  repository: {REPOSITORY}\n  condition: tidy.enabled\n",
            "tidy",
            "tidy.enabled",
        ),
    ],
)
def test_a_v2_umbrella_declares_the_dependency_in_chart_yaml(
    tmp_path: Path, entry: str, key: str, condition: str | None
) -> None:
    values = _chart(tmp_path / "platform", f"apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n{entry}")
    found = dependency_beside(values)
    assert found is not None
    assert (found.parent, found.key, found.condition) == ("platform", key, condition)
    assert found.source.endswith("Chart.yaml")


def test_a_v1_umbrella_declares_it_in_requirements_yaml(tmp_path: Path) -> None:
    requirements = f"dependencies:\n- name: descheduler\n  version: 0.29.0\n  repository: {REPOSITORY}\n"
    values = _chart(tmp_path / "old", "apiVersion: v1\nname: old\nversion: 1.0.0\n", requirements)
    found = dependency_beside(values)
    assert found is not None and found.version == "0.29.0" and found.source.endswith("requirements.yaml")


@pytest.mark.parametrize(
    "chart",
    [
        "apiVersion: v2\nname: descheduler\nversion: 0.30.1\n",  # the descheduler chart itself: no dependency
        "apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n- name: redis\n  repository: https://x.example/\n",
        "- not a mapping\n",
        ": : not yaml\n",
    ],
)
def test_no_dependency_on_the_descheduler_chart(tmp_path: Path, chart: str) -> None:
    assert dependency_beside(_chart(tmp_path / "c", chart)) is None


def test_no_chart_beside_and_standard_input(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("{}\n")
    assert dependency_beside(str(tmp_path / "values.yaml")) is None
    assert dependency_beside("-") is None


DEPENDENCY = Dependency("platform", "descheduler", None, "descheduler.enabled, global.descheduler", "Chart.yaml")


@pytest.mark.parametrize(
    ("values", "on"),
    [
        ({}, True),  # no path set: the condition has no effect
        ({"descheduler": {"enabled": False}}, False),
        ({"descheduler": {"enabled": True}, "global": {"descheduler": False}}, True),  # the first set path decides
        ({"descheduler": {"enabled": "false"}, "global": {"descheduler": False}}, False),  # not a boolean: next path
        ({"descheduler": None, "global": {"descheduler": True}}, True),
        ({"descheduler": ["enabled"]}, True),
    ],
)
def test_the_first_condition_path_holding_a_boolean_decides(values: dict[str, object], on: bool) -> None:
    assert enabled(DEPENDENCY, values) is on
    assert enabled(DEPENDENCY._replace(condition=None), values) is True
