"""``desched render``: output, exit codes, and one ``desched:`` line (no traceback) on bad input."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from desched.cli import main

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_prints_the_policy(capsys):
    path = os.path.join(GOLDEN, "example1.input.yaml")
    assert main(["render", path, "--namespace", "kube-system", "--namespace", "openshift-kube-scheduler"]) == 0
    out = capsys.readouterr().out
    with open(os.path.join(GOLDEN, "example1.policy.yaml"), encoding="utf-8") as handle:
        assert yaml.safe_load(out) == yaml.safe_load(handle)
    assert out.startswith("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n")


def test_prometheus_host(capsys):
    assert main(["render", os.path.join(GOLDEN, "example3.input.yaml"), "--prometheus-host", "prom.example"]) == 0
    policy = yaml.safe_load(capsys.readouterr().out)
    assert policy["metricsProviders"][0]["prometheus"]["url"] == "https://prom.example"


def test_prometheus_host_passed_means_no_placeholder_note(capsys):
    assert main(["render", os.path.join(GOLDEN, "example3.input.yaml"), "--prometheus-host", "prom.example"]) == 0
    assert "placeholder" not in capsys.readouterr().err


def test_a_placeholder_prometheus_url_is_noted(capsys):
    # issue 27, item 9: without --prometheus-host the made-up URL is printed, and stderr says it is made up
    assert main(["render", os.path.join(GOLDEN, "example3.input.yaml")]) == 0
    captured = capsys.readouterr()
    url = yaml.safe_load(captured.out)["metricsProviders"][0]["prometheus"]["url"]
    notes = [line for line in captured.err.splitlines() if url in line]
    assert len(notes) == 1 and ": note: " in notes[0]
    assert "placeholder" in notes[0] and "--prometheus-host" in notes[0]


def test_no_prometheus_no_placeholder_note(capsys):
    path = os.path.join(GOLDEN, "example1.input.yaml")
    assert main(["render", path, "--namespace", "kube-system", "--namespace", "openshift-kube-scheduler"]) == 0
    captured = capsys.readouterr()
    assert "metricsProviders" not in yaml.safe_load(captured.out) and "placeholder" not in captured.err


def test_notes_go_to_stderr(tmp_path, capsys):
    path = tmp_path / "kd.yaml"
    path.write_text(
        "kind: KubeDescheduler\nmetadata: {name: cluster}\nspec:\n  deschedulingIntervalSeconds: 1\n"
        "  profiles: [LongLifecycle]\n  profileCustomizations: {namespaces: {included: [a]}}\n"
    )
    assert main(["render", str(path)]) == 0
    captured = capsys.readouterr()
    assert "note:" in captured.err and "LowNodeUtilization" in captured.err


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("kind: KubeDescheduler\nmetadata: {name: cluster}\nspec:\n  profiles: []\n", ":4:13: "),
        ("kind: KubeDescheduler\nspec:\n  profiles: [TopologyAndDuplicates, SoftTopologyAndDuplicates]\n", "cannot"),
        ("apiVersion: v1\nkind: ConfigMap\n", "no KubeDescheduler"),
        ("a: [\n", "invalid YAML"),
        ("kind: KubeDescheduler\nspec: 3\n", "spec is missing"),
    ],
)
def test_errors_exit_2_with_one_line(tmp_path, capsys, text, fragment):
    path = tmp_path / "kd.yaml"
    path.write_text(text)
    assert main(["render", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("desched: ") and fragment in lines[0]


def test_missing_file(capsys):
    assert main(["render", "/nonexistent/kd.yaml"]) == 2
    assert capsys.readouterr().err.startswith("desched: cannot read")


def test_subprocess_stdin_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "desched", "render", "-"],
        input="kind: KubeDescheduler\nspec: {profiles: [Nope]}\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("desched: -:")
