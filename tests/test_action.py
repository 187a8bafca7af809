"""The composite GitHub Action (``action.yml``), its steps run for real.

Each ``run:`` step runs as GitHub's ``shell: bash`` runs it (``bash --noprofile --norc -eo pipefail FILE``) with the
files and directories a runner gives it (``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_ACTION_PATH``, ``RUNNER_TEMP``)
made by the test, and its ``${{ }}`` expressions evaluated from the inputs, the runner and the earlier steps' outputs.
One step is not run: "Install desched", which would ``pip install`` this checkout into a new virtual environment
from the network; its output ``desched`` is set to the ``desched`` of the test's own environment instead. A ``uses:``
step (the SARIF upload) is not run either: the test evaluates its ``if:`` and records what it would upload.

The expressions are evaluated by ``evaluate`` and ``condition`` below, which know only the forms ``action.yml`` uses
(a context reference, a quoted string, ``==`` between them, ``&&`` between comparisons) and refuse anything else, so
a new form in ``action.yml`` fails here instead of being evaluated wrongly.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
INSTALL = "Install desched"
DESCHED = Path(sys.executable).with_name("desched")
GOOD = ROOT / "examples" / "good" / "policy.yaml"
BROKEN = ROOT / "examples" / "broken" / "wrong-extension-point.yaml"

# -- expressions ------------------------------------------------------------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<reference>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+)|(?P<op>==|&&))"
)
EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}")


class ExpressionError(ValueError):
    """An expression of a form the evaluator does not know."""


def _tokens(expression: str) -> list[tuple[str, str]]:
    """``(kind, text)`` pairs of ``expression``; anything but a string, a dotted reference, ``==`` or ``&&`` is
    refused."""
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(expression.rstrip()):
        match = TOKEN.match(expression, position)
        if match is None or match.lastgroup is None:
            raise ExpressionError(f"unknown form at {position}: {expression!r}")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        position = match.end()
    return tokens


def _operand(token: tuple[str, str], contexts: dict[str, str]) -> str:
    """A quoted string's text, or a reference's value: a missing step output is ``''`` as on GitHub, any other
    missing name is refused."""
    kind, text = token
    if kind == "string":
        return text[1:-1].replace("''", "'")
    if kind != "reference":
        raise ExpressionError(f"operand expected, got {text!r}")
    if text in contexts:
        return contexts[text]
    if text.startswith("steps."):
        return ""
    raise ExpressionError(f"unknown context value {text!r}")


def evaluate(expression: str, contexts: dict[str, str]) -> str:
    """The value of an expression that is one reference or one string."""
    tokens = _tokens(expression)
    if len(tokens) != 1:
        raise ExpressionError(f"one operand expected: {expression!r}")
    return _operand(tokens[0], contexts)


def condition(expression: str, contexts: dict[str, str]) -> bool:
    """An ``if:`` of comparisons ``A == B`` joined by ``&&`` (without ``${{ }}``), with GitHub's implicit
    ``success()``, which holds here because the steps run only while all before them succeeded. Strings compare
    ignoring case, as GitHub compares them."""
    tokens = _tokens(expression)
    if len(tokens) % 4 != 3:
        raise ExpressionError(f"comparisons joined by && expected: {expression!r}")
    result = True
    for index in range(0, len(tokens), 4):
        left, operator, right = tokens[index : index + 3]
        joiner = tokens[index + 3][1] if index + 3 < len(tokens) else "&&"
        if operator[1] != "==" or joiner != "&&":
            raise ExpressionError(f"comparisons joined by && expected: {expression!r}")
        result = result and _operand(left, contexts).casefold() == _operand(right, contexts).casefold()
    return result


def interpolate(text: str, contexts: dict[str, str]) -> str:
    """``text`` with each ``${{ EXPRESSION }}`` replaced by its value."""
    return EMBEDDED.sub(lambda match: evaluate(match.group(1), contexts), text)


# -- the runner -------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    """What running the action's steps did: each step's exit status, the outputs of each step with an id, what the
    upload step would upload (``None``: skipped), and whether any step wrote ``$GITHUB_ENV``."""

    statuses: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    upload: dict[str, str] | None = None
    wrote_env: bool = False


def _read_outputs(path: Path) -> dict[str, str]:
    """The ``name=value`` lines of a ``$GITHUB_OUTPUT`` file (the only form the action writes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all("=" in line and "<<" not in line for line in lines), lines
    return dict(line.split("=", 1) for line in lines)


def run_action(workspace: Path, runner_temp: Path, inputs: dict[str, str]) -> Run:
    """Runs the action's steps in ``workspace`` with ``inputs`` over its defaults, until a step fails."""
    declared = ACTION["inputs"]
    assert set(inputs) <= set(declared)
    contexts = {f"inputs.{name}": str(spec.get("default", "")) for name, spec in declared.items()}
    contexts |= {f"inputs.{name}": value for name, value in inputs.items()}
    contexts |= {"github.action_path": str(ROOT), "runner.temp": str(runner_temp)}
    result = Run()
    for number, step in enumerate(STEPS):
        if "if" in step and not condition(step["if"], contexts):
            continue
        if "uses" in step:
            assert "upload-sarif" in step["uses"]
            result.upload = {key: interpolate(str(value), contexts) for key, value in step["with"].items()}
            continue
        files = runner_temp / f"step-{number}"
        files.mkdir()
        output, env_file, script = files / "output", files / "env", files / "script.sh"
        output.touch()
        env_file.touch()
        if step["name"] == INSTALL:  # replaced: this environment's desched stands for the one pip would install
            output.write_text(f"desched={DESCHED}\n", encoding="utf-8")
            status = 0
        else:
            assert step["shell"] == "bash"
            script.write_text(step["run"], encoding="utf-8")
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(runner_temp),
                "GITHUB_OUTPUT": str(output),
                "GITHUB_ENV": str(env_file),
                "GITHUB_ACTION_PATH": str(ROOT),
                "RUNNER_TEMP": str(runner_temp),
            }
            env |= {name: interpolate(str(value), contexts) for name, value in step.get("env", {}).items()}
            command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
            status = subprocess.run(command, cwd=workspace, env=env, capture_output=True, timeout=120).returncode
        result.statuses[step["name"]] = status
        result.wrote_env |= env_file.stat().st_size > 0
        if "id" in step:
            result.outputs[step["id"]] = _read_outputs(output)
            contexts |= {f"steps.{step['id']}.outputs.{key}": value for key, value in _read_outputs(output).items()}
        if status != 0:
            break
    return result


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout to lint: an empty directory the case fills."""
    assert DESCHED.is_file(), f"the test environment has no desched at {DESCHED}"
    (tmp_path / "runner").mkdir()
    (tmp_path / "repo").mkdir()
    return tmp_path / "repo"


def _sarif_results(path: Path) -> list[dict[str, Any]]:
    sarif = json.loads(path.read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    return [result for run in sarif["runs"] for result in run["results"]]


# -- the cases --------------------------------------------------------------------------------------------------------


def test_a_clean_repository_uploads_its_report_and_passes(workspace: Path) -> None:
    shutil.copy(GOOD, workspace / "policy.yaml")
    run = run_action(workspace, workspace.parent / "runner", {})
    assert run.outputs["lint"] == {"exit-code": "0", "complete-report": "true"}
    assert run.upload == {"sarif_file": "desched.sarif", "category": "desched"}
    assert _sarif_results(workspace / "desched.sarif") == []
    assert run.statuses["Fail on errors"] == 0
    assert not run.wrote_env


def test_findings_are_uploaded_and_fail_the_job(workspace: Path) -> None:
    shutil.copy(BROKEN, workspace / "broken.yaml")
    run = run_action(workspace, workspace.parent / "runner", {"sarif-file": "out/report.sarif", "paths": ". "})
    assert run.outputs["lint"] == {"exit-code": "1", "complete-report": "true"}
    assert run.upload == {"sarif_file": "out/report.sarif", "category": "desched"}
    assert "DS202" in {result["ruleId"] for result in _sarif_results(workspace / "out" / "report.sarif")}
    assert run.statuses["Fail on errors"] == 1


@pytest.mark.parametrize(
    "inputs",
    [{"target-version": "not-a-release"}, {"paths": "missing.yaml"}],
    ids=["bad-target-version", "missing-path"],
)
def test_an_input_error_uploads_nothing_and_fails_with_2(workspace: Path, inputs: dict[str, str]) -> None:
    shutil.copy(BROKEN, workspace / "broken.yaml")
    run = run_action(workspace, workspace.parent / "runner", inputs)
    assert run.outputs["lint"] == {"exit-code": "2", "complete-report": "false"}
    assert run.upload is None
    assert run.statuses["Fail on errors"] == 2


@pytest.mark.parametrize("setting", ["false", "no"])
def test_upload_sarif_other_than_true_keeps_the_report_as_a_file(workspace: Path, setting: str) -> None:
    shutil.copy(BROKEN, workspace / "broken.yaml")
    run = run_action(workspace, workspace.parent / "runner", {"upload-sarif": setting})
    assert run.upload is None and (workspace / "desched.sarif").is_file()
    assert run.statuses["Fail on errors"] == 1


def test_the_upload_action_is_pinned_by_commit_to_a_v4_release() -> None:
    [upload] = [step for step in STEPS if "uses" in step]
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert re.fullmatch(r"github/codeql-action/upload-sarif@[0-9a-f]{40}", upload["uses"])
    assert re.search(re.escape(upload["uses"]) + r" # v4\.\d+\.\d+\n", text)


# -- the evaluator itself ---------------------------------------------------------------------------------------------

CONTEXTS = {"inputs.upload-sarif": "TRUE", "steps.lint.outputs.complete-report": "true", "runner.temp": "/t"}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("inputs.upload-sarif == 'true'", True),  # GitHub compares strings ignoring case
        ("inputs.upload-sarif == 'true' && steps.lint.outputs.complete-report == 'true'", True),
        ("inputs.upload-sarif == 'true' && steps.lint.outputs.complete-report == 'false'", False),
        ("steps.other.outputs.x == ''", True),  # a missing step output is empty
        ("'it''s' == 'IT''S'", True),
    ],
)
def test_conditions_are_evaluated(expression: str, expected: bool) -> None:
    assert condition(expression, CONTEXTS) is expected


def test_interpolation_replaces_each_expression() -> None:
    assert interpolate("${{ runner.temp }}/venv and ${{ 'x' }}", CONTEXTS) == "/t/venv and x"


@pytest.mark.parametrize(
    "expression",
    [
        "always() && inputs.upload-sarif == 'true'",
        "inputs.upload-sarif != 'true'",
        "inputs.upload-sarif == 'true' || steps.lint.outputs.complete-report == 'true'",
        "!inputs.upload-sarif",
        "(inputs.upload-sarif == 'true')",
        "inputs.upload-sarif == 1",
        "inputs.upload-sarif",
        "inputs.upload-sarif == 'true' &&",
        "inputs.upload-sarif == 'true' == 'true'",
        "${{ inputs.upload-sarif == 'true' }}",
        "github.token == 'x'",
        'inputs.upload-sarif == "true"',
    ],
)
def test_other_forms_are_refused(expression: str) -> None:
    with pytest.raises(ExpressionError):
        condition(expression, CONTEXTS)


@pytest.mark.parametrize("expression", ["inputs.upload-sarif == 'true'", "format('{0}', runner.temp)", "inputs.x"])
def test_interpolation_takes_one_known_operand(expression: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(expression, CONTEXTS)
