"""``scripts/image pin-digest``, which the release workflow runs, on a copy of deploy/ (and of the chart if any)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.image import pin

ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "0123456789abcdef" * 4
CHART = ROOT / "deploy" / pin.CHART_VALUES


def _copy(tmp_path: Path) -> Path:
    deploy = tmp_path / "deploy"
    shutil.copytree(ROOT / "deploy", deploy)
    return deploy


def _documents(top: Path) -> dict[str, Any]:
    """Every YAML file under ``top``: its one document, or the list of them if it has several (not the chart's
    templates: Go templates, which Helm renders)."""
    parsed: dict[str, Any] = {}
    for path in sorted(top.rglob("*.yaml")):
        if (path.parent.parent / "Chart.yaml").is_file() and path.parent.name == "templates":
            continue
        documents = list(yaml.safe_load_all(path.read_text()))
        parsed[str(path.relative_to(top))] = documents[0] if len(documents) == 1 else documents
    return parsed


def _script(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "scripts" / "image"), "pin-digest", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_every_kustomization_naming_the_image_gets_the_digest_and_nothing_else_changes(tmp_path: Path) -> None:
    deploy = _copy(tmp_path)
    before = _documents(deploy)
    done = _script("--deploy", str(deploy), "0.2.0", DIGEST)
    assert done.returncode == 0, done.stderr
    after = _documents(deploy)
    texts = {path: path.read_text() for path in deploy.rglob("*") if path.is_file()}
    pinned = {name for name, document in before.items() if name.endswith("kustomization.yaml") and _image(document)}
    assert len(pinned) >= 4  # the webhook base and the three executor overlays
    chart = {str(pin.CHART_VALUES)} if (deploy / pin.CHART_VALUES).is_file() else set()
    assert sorted(done.stdout.splitlines()) == sorted(f"pinned {deploy / name}" for name in pinned | chart)
    for name, document in after.items():
        if name in pinned:
            original = _image(before[name])
            assert original is not None
            assert _image(document) == {**original, "newTag": "0.2.0", "digest": DIGEST}
            document["images"] = before[name]["images"]
        if name != str(pin.CHART_VALUES):
            assert document == before[name], name
    assert _script("--deploy", str(deploy), "0.2.0", DIGEST).returncode == 0
    assert {path: path.read_text() for path in deploy.rglob("*") if path.is_file()} == texts  # nothing changes


def _image(document: Any) -> dict[str, str] | None:
    for image in (document or {}).get("images", []) if isinstance(document, dict) else []:
        if image.get("name") == pin.IMAGE:
            return dict(image)
    return None


@pytest.mark.skipif(not CHART.is_file(), reason=f"no chart in this checkout ({CHART.relative_to(ROOT)})")
def test_the_chart_values_get_the_tag_and_digest(tmp_path: Path) -> None:
    deploy = _copy(tmp_path)
    before = yaml.safe_load((deploy / pin.CHART_VALUES).read_text())
    assert _script("--deploy", str(deploy), "0.2.0", DIGEST).returncode == 0
    after = yaml.safe_load((deploy / pin.CHART_VALUES).read_text())
    assert after["image"] == {**before["image"], "tag": "0.2.0", "digest": DIGEST}
    assert {key: value for key, value in after.items() if key != "image"} == {
        key: value for key, value in before.items() if key != "image"
    }


def test_a_values_file_keeps_its_comments_and_other_keys() -> None:
    text = '# chart values\nimage:\n  repository: ghcr.io/desched/desched  # where\n  digest: ""\nreplicas: 2\n'
    pinned = pin._pin_values(text, {"tag": "1.0.0", "digest": DIGEST})
    assert pinned is not None
    assert pinned.splitlines() == [
        "# chart values",
        "image:",
        "  repository: ghcr.io/desched/desched  # where",
        f'  digest: "{DIGEST}"',
        '  tag: "1.0.0"',
        "replicas: 2",
    ]


@pytest.mark.parametrize(
    ("version", "digest"),
    [("0.2.0", "sha256:abc"), ("0.2.0", "0123456789abcdef" * 4), ("0.2.0; rm -rf /", DIGEST), ("", DIGEST)],
)
def test_a_malformed_digest_or_version_is_refused_and_nothing_is_written(
    tmp_path: Path, version: str, digest: str
) -> None:
    deploy = _copy(tmp_path)
    before = _documents(deploy)
    done = _script("--deploy", str(deploy), version, digest)
    assert done.returncode == 1
    assert done.stderr.startswith("image: pin-digest failed: ")
    assert _documents(deploy) == before


def test_a_tree_without_the_image_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml]\n")
    with pytest.raises(pin.PinError):
        pin.pin(tmp_path, "0.2.0", DIGEST)
