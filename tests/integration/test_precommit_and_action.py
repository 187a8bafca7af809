"""The pre-commit hook, run for real with ``pre-commit try-repo``, and the composite GitHub Action's shape."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BROKEN = os.path.join(ROOT, "examples", "broken", "wrong-extension-point.yaml")
GOOD = os.path.join(ROOT, "examples", "good", "policy.yaml")


def _git(cwd: str, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="needs pre-commit, git")
def test_pre_commit_try_repo_runs_the_hook(tmp_path):
    _git(str(tmp_path), "init", "-q")
    shutil.copy(BROKEN, tmp_path / "broken.yaml")
    shutil.copy(GOOD, tmp_path / "good.yaml")
    (tmp_path / "notes.txt").write_text("not yaml: [")
    _git(str(tmp_path), "add", ".")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def run(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pre-commit", "try-repo", ROOT, "desched-lint", "--files", *files],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )

    failed = run("broken.yaml", "good.yaml", "notes.txt")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "DS202" in failed.stdout and "broken.yaml" in failed.stdout
    passed = run("good.yaml", "notes.txt")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_hook_definition_matches_pre_commit_expectations():
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        hooks = yaml.safe_load(handle)
    [hook] = [h for h in hooks if h["id"] == "desched-lint"]
    assert hook["language"] == "python"
    assert hook["entry"].split()[:2] == ["desched", "lint"]
    import re

    assert re.search(hook["files"], "deploy/policy.yaml") and re.search(hook["files"], "x.yml")
    assert not re.search(hook["files"], "README.md")
    assert hook.get("pass_filenames", True) is True


def test_whole_repository_hook_lints_everything_in_one_run():
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        hooks = yaml.safe_load(handle)
    [hook] = [h for h in hooks if h["id"] == "desched-lint-repository"]
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert hook["entry"] == "desched lint ."


def test_action_is_composite_and_uploads_sarif():
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    lint = next(step for step in steps if step.get("id") == "lint")
    assert "--format sarif" in lint["run"] and '"$DESCHED" lint' in lint["run"]
    upload = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert all(step.get("shell") == "bash" for step in steps if "run" in step)


def test_action_scripts_take_inputs_from_the_environment_and_leave_the_callers_python_alone():
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as handle:
        action = yaml.safe_load(handle)
    steps = action["runs"]["steps"]
    for step in steps:
        # an expression pasted into a script is a shell injection: inputs arrive as environment variables
        assert "${{" not in step.get("run", ""), step
    assert not any("setup-python" in step.get("uses", "") for step in steps)
    install = next(step for step in steps if step.get("name") == "Install desched")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and "python3 -m venv" in install["run"]
    assert "version" not in action["inputs"]  # nothing of that name is on PyPI: the action installs its own checkout
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        assert "security-events: write" in handle.read()
