"""No control-plane process outlives the session that started it: after a failure, an interrupt or a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.kcp import controlplane
from tests.kcp.api import Api, Json
from tests.kcp.install import Installation
from tests.kcp.objects import wait_for

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("probe_session.py")
# Starting and stopping etcd, kube-apiserver and kube-controller-manager takes seconds on an idle machine and far
# longer on a loaded two-core one (CI runs the suite beside other work): every wait has minutes of headroom.
START_SECONDS, STOP_SECONDS, GONE_SECONDS = 240, 240, 60


def _session(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[bytes], Path]:
    record = tmp_path / "record.json"
    env = {**os.environ, "DESCHED_PROBE_RECORD": str(record), "DESCHED_PROBE_MODE": mode}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), record


def _recorded(record: Path, session: subprocess.Popen[bytes]) -> Json:
    wait_for(
        lambda: record.is_file() or session.poll() is not None, timeout=START_SECONDS, what="the probe session to start"
    )
    assert record.is_file(), session.communicate()[0].decode()
    recorded: Json = json.loads(record.read_text())
    return recorded


def _gone(pids: list[int]) -> bool:
    return not any(controlplane.alive(pid) for pid in pids)


def test_a_failed_session_stops_its_processes(installation: Installation, tmp_path: Path) -> None:
    session, record = _session(tmp_path, "fail")
    output = session.communicate(timeout=START_SECONDS + STOP_SECONDS)[0].decode()
    assert session.returncode == 1, output
    assert "failing on purpose" in output
    started = json.loads(record.read_text())
    assert len(started["pids"]) == 3
    assert _gone(started["pids"])
    assert not Path(started["directory"]).exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda sig: sig.name)
def test_an_interrupted_or_killed_session_leaves_nothing_running(
    installation: Installation, tmp_path: Path, sig: signal.Signals
) -> None:
    session, record = _session(tmp_path, "hang")
    try:
        started = _recorded(record, session)
        assert not _gone(started["pids"])
        session.send_signal(sig)
        session.communicate(timeout=STOP_SECONDS)
        wait_for(lambda: _gone(started["pids"]), timeout=GONE_SECONDS, what="the control plane's processes to stop")
    finally:
        if session.poll() is None:
            session.kill()
            session.communicate()
    controlplane.sweep()  # a killed session cannot remove its directory; the next session's sweep does
    assert not Path(started["directory"]).exists()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "scripts" / "control-plane"), *args], capture_output=True, text=True, timeout=START_SECONDS
    )


def test_the_command_line_starts_reports_and_stops_a_control_plane(installation: Installation) -> None:
    started = time.monotonic()
    up = _cli("up")
    assert up.returncode == 0, up.stderr
    elapsed = time.monotonic() - started
    directory = up.stdout.split("directory: ")[1].split()[0]
    plane = controlplane.ControlPlane.load(directory)
    try:
        assert elapsed < 30, f"up took {elapsed:.1f} s"
        status = _cli("status")
        assert status.returncode == 0
        assert (
            f"{directory} (current): {plane.server}: etcd running, kube-apiserver running, "
            "kube-controller-manager running" in status.stdout
        )
        config = json.loads(Path(plane.kubeconfig).read_text())
        token = config["users"][0]["user"]["token"]
        ca = config["clusters"][0]["cluster"]["certificate-authority"]
        with Api(config["clusters"][0]["cluster"]["server"], token, ca) as api:
            assert "default" in {ns["metadata"]["name"] for ns in api.list("v1", "Namespace")}
        pids = [process.pid for process in plane.processes]
        down = _cli("down")
        assert down.returncode == 0 and f"stopped {directory}" in down.stdout
        assert _gone(pids)
        assert not Path(directory).exists()
        assert _cli("status").returncode == 1
        assert _cli("down").stdout.strip() == "control-plane: nothing to stop"
    finally:
        plane.stop()
