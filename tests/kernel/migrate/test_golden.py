"""Golden files for ``desched migrate``: comment preservation, ConfigMap and Helm values rewriting, variants.

Each case runs the CLI in-process on ``golden/<input>`` and compares stdout with ``golden/<case>.out.<ext>`` and
stderr (the notes) with ``golden/<case>.notes``. Regenerate after an intended change with
``DESCHED_UPDATE_GOLDENS=1 python -m pytest tests/kernel/migrate`` and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from desched import versions
from desched.cli import main
from desched.linter.engine import Settings, lint_text
from desched.migrate.rewrite import migrate_text

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DESCHED_UPDATE_GOLDENS") == "1"

#: case -> (input file, extra CLI arguments)
CASES: dict[str, tuple[str, list[str]]] = {
    "raw-commented": ("raw-commented.in.yaml", []),
    "raw-commented.v0.33": ("raw-commented.in.yaml", ["--target-version", "v0.33"]),
    "raw-commented.upstream": ("raw-commented.in.yaml", ["--upstream-compatible"]),
    "configmap": ("configmap.in.yaml", []),
    "helm-values": ("helm-values.in.yaml", []),
    "helm-values-no-version": ("helm-values-no-version.in.yaml", []),
    "multi-document": ("multi-document.in.yaml", []),
    "merge-profiles": ("merge-profiles.in.yaml", ["--merge-profiles"]),
    "merge-profiles.unmerged": ("merge-profiles.in.yaml", []),
    "list": ("list.in.yaml", []),
    "json-policy": ("json-policy.in.json", []),
}


def _target(args: list[str]) -> int | None:
    return versions.parse(args[args.index("--target-version") + 1]) if "--target-version" in args else None


def _run(case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    source, args = CASES[case]
    monkeypatch.chdir(GOLDEN)
    assert main(["migrate", *args, source]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def _check(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"{path.name} is missing: run with DESCHED_UPDATE_GOLDENS=1"
    assert actual == path.read_bytes().decode("utf-8"), f"{path.name} differs from the migrated output"


def _output(case: str) -> Path:
    suffix = Path(CASES[case][0]).suffix
    return GOLDEN / f"{case}.out{suffix}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_and_notes(case, capsys, monkeypatch):
    out, err = _run(case, capsys, monkeypatch)
    _check(_output(case), out)
    _check(GOLDEN / f"{case}.notes", err)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_is_final(case):
    """Migrating the output again changes nothing, byte for byte."""
    source, args = CASES[case]
    text = _output(case).read_bytes().decode("utf-8")
    again = migrate_text(source, text, target=_target(args), upstream_compatible="--upstream-compatible" in args)
    assert not again.errors
    assert not again.changed and again.text == text


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_output_lints_without_errors(case):
    source, args = CASES[case]
    text = _output(case).read_bytes().decode("utf-8")
    result = lint_text(source, text, Settings(target=_target(args)))
    errors = [f"{f.line}:{f.column} {f.rule} {f.message}" for f in result.findings if f.severity == "error"]
    assert errors == []
    assert result.checked, "the output still holds the policy"
    assert all(run.doc.api_version == "descheduler/v1alpha2" for run in result.checked)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_keeps_every_comment(case):
    """No comment of the input is lost: each is still in the output (moved next to what it documents)."""
    source, _ = CASES[case]
    old = _comments((GOLDEN / source).read_text(encoding="utf-8"))
    new = _comments(_output(case).read_text(encoding="utf-8"))
    assert [comment for comment in old if comment not in new] == []


def _comments(text: str) -> list[str]:
    found = (re.search(r"(?:^|\s)(#.*)$", line) for line in text.splitlines())
    return [match.group(1).strip() for match in found if match]
