"""DS614 kubernetes-version-skew through the lint API: the descheduler image's release against the cluster's Kubernetes
version, which only the configuration (``kubernetes-version`` in ``.desched.yaml``) or ``--kubernetes-version``
names; the option wins over the file, and a version desched cannot read is an error before anything is linted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from desched.cli import main
from desched.errors import UsageError
from desched.linter.config import ConfigError, load
from desched.linter.engine import Settings
from desched.linter.lint import lint_paths
from desched.linter.rules._deployment_examples import IMAGE, runner
from desched.versions import NEWEST, KubernetesVersion, kubernetes_from_option, parse_kubernetes


def _image(tag: str) -> str:
    """The CronJob of the examples running the descheduler image of ``tag`` (``""``: no tag; ``@...``: a digest)."""
    repository = IMAGE.split(":")[0]
    return runner("CronJob").replace(IMAGE, repository + (tag if tag.startswith("@") else f":{tag}" if tag else ""))


def _ds614(tmp_path: Path, text: str, kubernetes: str | None) -> list[tuple[str, str]]:
    """(severity, message) of each DS614 finding on ``text`` with the cluster on ``kubernetes``."""
    (tmp_path / "descheduler.yaml").write_text(text)
    settings = Settings(kubernetes=parse_kubernetes(kubernetes) if kubernetes else None)
    found = lint_paths([str(tmp_path)], settings).findings
    return [(f.severity, f.message) for f in found if f.rule == "DS614"]


@pytest.mark.parametrize(
    ("tag", "kubernetes", "expected"),
    [
        ("v0.36.0", "1.36", None),
        ("v0.36.0", "1.33", None),  # 3 ahead: within upstream's skew
        ("v0.36.0", "1.32", "warning"),  # 4 ahead
        ("v0.30.0", "1.33", None),  # 3 behind
        ("v0.29.1", "1.33", "warning"),  # 4 behind
        ("v0.36.0", "v1.33.2-eks-2d98532", None),  # a managed provider's server version
        ("v0.36.0", "v1.32.5+k3s1", "warning"),
        ("v0.25.0", "1.22", None),  # policy/v1 Eviction is served from 1.22
        ("v0.26.0", "1.22", "warning"),
        ("v0.25.0", "1.21", "error"),  # policy/v1 Eviction, not served before 1.22 (and 4 ahead: one finding)
        ("v0.36.0", "v1.21.14", "error"),
        ("v0.24.2", "1.21", None),  # v0.24 still evicts through policy/v1beta1
        ("v0.24.2", "1.20", "warning"),
        ("v0.10.0", "1.30", None),  # before v0.18 a release names no Kubernetes minor
        ("latest", "1.20", None),  # no release: DS616's
        ("", "1.20", None),
        ("@sha256:" + "0" * 64, "1.20", None),
        ("v0.25.0", None, None),  # the cluster's version unknown: silent
    ],
)
def test_the_image_release_against_the_clusters_version(tmp_path, tag, kubernetes, expected):
    found = _ds614(tmp_path, _image(tag), kubernetes)
    assert [severity for severity, _ in found] == ([expected] if expected else [])


def test_the_messages_say_why_and_where_the_version_was_set(tmp_path):
    ((_, skew),) = _ds614(tmp_path, _image("v0.36.0"), "1.30")
    assert "v0.36" in skew and "6 minors ahead of Kubernetes 1.30 (--kubernetes-version)" in skew
    assert "may not be supported" in skew and "run descheduler v0.30" in skew
    ((_, eviction),) = _ds614(tmp_path, _image("v0.25.0"), "1.18")
    assert "policy/v1 Eviction" in eviction and "Kubernetes 1.18 (--kubernetes-version)" in eviction


def test_the_finding_points_at_the_image(tmp_path):
    (tmp_path / "descheduler.yaml").write_text(_image("v0.25.0"))
    settings = Settings(kubernetes=parse_kubernetes("1.21"))
    (finding,) = [f for f in lint_paths([str(tmp_path)], settings).findings if f.rule == "DS614"]
    line = (tmp_path / "descheduler.yaml").read_text().splitlines()[finding.line - 1]
    assert line.strip() == "image: registry.k8s.io/descheduler/descheduler:v0.25.0"


def test_desched_run_is_not_judged(tmp_path):
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: desched, namespace: kube-system}\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: desched\n        image: ghcr.io/acme/desched:1.0\n"
        "        args: [run, --policy, /p/policy.yaml, --interval, 5m, --target-version, v0.36]\n"
    )
    assert _ds614(tmp_path, text, "1.20") == []


def test_chart_values_are_judged_by_the_image_the_chart_runs(tmp_path):
    text = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d, namespace: kube-system}\n"
        "spec:\n  chart:\n    spec: {chart: descheduler, version: 0.34.0}\n  values:\n"
        "    image: {tag: v0.30.0}\n    deschedulerPolicy:\n      profiles: []\n"
    )
    assert [severity for severity, _ in _ds614(tmp_path, text, "1.21")] == ["error"]
    assert [severity for severity, _ in _ds614(tmp_path, text, "1.36")] == ["warning"]
    assert _ds614(tmp_path, text, "1.31") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.30", KubernetesVersion(30, "1.30", "s")),
        ("v1.30", KubernetesVersion(30, "1.30", "s")),
        ("v1.30.2", KubernetesVersion(30, "1.30.2", "s")),
        (" 1.9.0 ", KubernetesVersion(9, "1.9.0", "s")),
        ("v1.25.12-eks-2d98532", KubernetesVersion(25, "1.25.12", "s")),
        ("v1.30.2+k3s1", KubernetesVersion(30, "1.30.2", "s")),
    ],
)
def test_kubernetes_versions_desched_reads(text, expected):
    assert parse_kubernetes(text, "s") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("v0.30", "that is a descheduler release"),
        ("0.30.1", "that is a descheduler release"),
        ("1", "expected 1.NN or v1.NN.P"),
        ("2.0", "expected 1.NN or v1.NN.P"),
        ("1.30.x", "expected 1.NN or v1.NN.P"),
        ("1.030", "expected 1.NN or v1.NN.P"),
        ("1.30-eks", "expected 1.NN or v1.NN.P"),  # a suffix follows the patch, as servers report it
        ("latest", "expected 1.NN or v1.NN.P"),
        ("", "expected 1.NN or v1.NN.P"),
    ],
)
def test_kubernetes_versions_desched_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        parse_kubernetes(text)
    with pytest.raises(UsageError, match="--kubernetes-version: invalid Kubernetes version"):
        kubernetes_from_option(text)


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A directory holding a descheduler v0.36 CronJob, as the current directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "descheduler.yaml").write_text(_image("v0.36.0"))
    return tmp_path


def _cli(capsys, *options: str) -> tuple[int, list[str], str]:
    """``desched lint`` of the current directory: its exit code, the messages of its DS614 findings and stderr."""
    code = main(["lint", "--format", "json", *options, "."])
    out, err = capsys.readouterr()
    findings = json.loads(out)["findings"] if out else []
    return code, [finding["message"] for finding in findings if finding["rule"] == "DS614"], err


@pytest.mark.parametrize(
    ("config", "options", "expected"),
    [
        (None, [], None),
        ('kubernetes-version: "1.30"\n', [], "kubernetes-version in "),
        ('kubernetes-version: "v1.30.2"\n', [], "kubernetes-version in "),
        (None, ["--kubernetes-version", "1.30"], "(--kubernetes-version)"),
        ('kubernetes-version: "1.30"\n', ["--kubernetes-version", "1.36"], None),  # the option wins
        ('kubernetes-version: "1.36"\n', ["--kubernetes-version=v1.30.1"], "(--kubernetes-version)"),
        ('kubernetes-version: "1.30"\n', ["--no-config"], None),
    ],
    ids=["unset", "config", "config-patch", "option", "option-wins", "option-wins-the-other-way", "no-config"],
)
def test_the_option_wins_over_the_configuration(repository, capsys, config, options, expected):
    if config is not None:
        (repository / ".desched.yaml").write_text(config)
    code, messages, _ = _cli(capsys, *options)
    assert code == 0  # a warning does not fail the run
    if expected is None:
        assert messages == []
    else:
        (message,) = messages
        assert expected in message and "Kubernetes 1.30" in message


def test_pyproject_table(repository, capsys):
    (repository / "pyproject.toml").write_text('[tool.desched]\nkubernetes-version = "1.30"\n')
    assert load(str(repository / "pyproject.toml")).kubernetes == KubernetesVersion(
        30, "1.30", f"kubernetes-version in {repository / 'pyproject.toml'}"
    )
    assert len(_cli(capsys)[1]) == 1


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("kubernetes-version: 1.30\n", 'write the version as a quoted string ("1.30"): 1.3 is read as a number'),
        ("kubernetes-version: 1\n", "write the version as a quoted string"),
        ("kubernetes-version: [1.30]\n", "expected the cluster's Kubernetes version as a string"),
        ("kubernetes-version: v0.30\n", "that is a descheduler release"),
        ("kubernetes-version: '2.1'\n", "invalid Kubernetes version '2.1'"),
        ("kubernetesVersion: '1.30'\n", "unknown key (expected target-version, kubernetes-version"),
    ],
)
def test_an_invalid_configured_version_is_a_configuration_error(repository, capsys, config, message):
    path = repository / ".desched.yaml"
    path.write_text(config)
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        load(str(path))
    assert str(path) in str(info.value)
    code, _, err = _cli(capsys)
    assert code == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_invalid_option_is_a_usage_error(repository, capsys):
    (repository / ".desched.yaml").write_text('kubernetes-version: "1.30"\n')
    code, messages, err = _cli(capsys, "--kubernetes-version", "1.3x")
    assert code == 2 and messages == [] and "Traceback" not in err
    assert err == (
        "desched: --kubernetes-version: invalid Kubernetes version '1.3x': expected 1.NN or v1.NN.P, the cluster's "
        f"version (for example 1.{NEWEST} or v1.{NEWEST}.2; `kubectl version` shows it as Server Version)\n"
    )
