"""Run only by test_lifecycle.py (the name keeps pytest from collecting it): a session that starts the control plane,
records its PIDs, then fails or waits to be interrupted."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.kcp.controlplane import ControlPlane

pytestmark = pytest.mark.cluster


def test_probe(control_plane: ControlPlane) -> None:
    record = {"directory": control_plane.directory, "pids": [process.pid for process in control_plane.processes]}
    Path(os.environ["DESCHED_PROBE_RECORD"]).write_text(json.dumps(record))
    if os.environ["DESCHED_PROBE_MODE"] == "fail":
        pytest.fail("failing on purpose")
    time.sleep(300)
