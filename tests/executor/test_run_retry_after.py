"""``desched run`` against a server that asks it to come back much later: the cycle still ends by its deadline."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from desched.cli import main
from tests.executor.test_command import POLICY
from tests.fakeapi import Answer, FakeApi, bounded

CYCLE = 2  # seconds: --cycle-timeout, shorter than --request-timeout


@pytest.mark.parametrize(("status", "after"), [(429, "3600"), (503, str(10**9))])
def test_a_retry_after_past_the_cycle_timeout_ends_the_run_by_the_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int, after: str
) -> None:
    def route(method: str, path: str) -> Answer:
        if path == "/version":
            return Answer(200, {"gitVersion": "v1.30.0"})
        return Answer(status, {"kind": "Status", "message": "come back later"}, (("Retry-After", after),))

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    with FakeApi(route) as api:
        kubeconfig = str(api.kubeconfig(tmp_path / "config"))
        with bounded(CYCLE + 10):
            code = main(
                [
                    *("run", "--policy", str(policy), "--kubeconfig", kubeconfig),
                    *("--cycle-timeout", f"{CYCLE}s", "--request-timeout", "5s"),
                ]
            )
        ended = time.monotonic()
        cycle_started = min(at for _, path, at in api.log if path != "/version")  # the cycle's first listing
    err = capsys.readouterr().err
    assert code == 2  # the cluster could not be listed before the deadline: nothing evicted
    assert ended - cycle_started < CYCLE + 1
    assert f"asked to retry after {after} s" in err
    assert "cannot list the cluster" in err
