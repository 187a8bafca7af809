"""Mount points inside the image resolve its symbolic links within the image, never to the host's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.image.sandbox import SandboxError, inside


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    root = tmp_path / "rootfs"
    (root / "run").mkdir(parents=True)
    (root / "var").mkdir()
    (root / "var" / "run").symlink_to("/run")  # as in Debian: absolute, which on the host means the host's /run
    (root / "var" / "lib").symlink_to("../usr/lib")
    (root / "loop").symlink_to("loop")
    return root


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/var/run/secrets/kubernetes.io/serviceaccount", "run/secrets/kubernetes.io/serviceaccount"),
        ("/var/lib/x", "usr/lib/x"),
        ("/certs", "certs"),
        ("/../../../etc", "etc"),
        ("/var/../../run", "run"),
    ],
)
def test_a_target_resolves_within_the_root(rootfs: Path, target: str, expected: str) -> None:
    assert inside(rootfs, target) == rootfs / expected


def test_a_symbolic_link_loop_is_an_error(rootfs: Path) -> None:
    with pytest.raises(SandboxError):
        inside(rootfs, "/loop/x")
