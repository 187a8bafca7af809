"""Run only by test_lifecycle.py (the name keeps pytest from collecting it): a session that starts the control plane,
records its PIDs, then fails or waits to be interrupted."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.kcp.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

# Interruptible as a session started at a terminal is, also when the suite runs in the background of a shell, whose
# children inherit SIGINT ignored (Python then installs no KeyboardInterrupt handler of its own).
signal.signal(signal.SIGINT, signal.default_int_handler)


def test_probe(control_plane: ControlPlane) -> None:
    record = {"directory": control_plane.directory, "pids": [process.pid for process in control_plane.processes]}
    target = Path(os.environ["DESCHED_PROBE_RECORD"])
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(record))
    partial.replace(target)  # whole or absent: the test reads it as soon as it exists
    if os.environ["DESCHED_PROBE_MODE"] == "fail":
        pytest.fail("failing on purpose")
    time.sleep(300)
