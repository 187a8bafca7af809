"""A server's ``Retry-After`` never holds a request past its timeout or its deadline (the webhook's cache and
``desched run`` use this client)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path

import pytest

from desched.errors import KubeError
from desched.runtime.kube import KubeClient
from tests.fakeapi import Answer, FakeApi, bounded

HUGE = 10**9


def _busy(status: int, after: str) -> FakeApi:
    return FakeApi(
        lambda method, path: Answer(status, {"kind": "Status", "message": "busy"}, (("Retry-After", after),))
    )


@pytest.mark.parametrize(
    ("status", "after", "asked"),
    [
        (429, lambda: "3600", 3600),
        (503, lambda: str(HUGE), HUGE),
        (429, lambda: formatdate(time.time() + 3600, usegmt=True), 3600),  # an HTTP date, made when the test runs
    ],
    ids=["429-seconds", "503-huge", "429-http-date"],
)
def test_the_waits_of_a_call_add_up_to_at_most_the_request_timeout(
    tmp_path: Path, status: int, after: Callable[[], str], asked: int
) -> None:
    warnings: list[str] = []
    with _busy(status, after()) as api:
        kube = KubeClient(str(api.kubeconfig(tmp_path / "config")), timeout=1, warn=warnings.append)
        started = time.monotonic()
        with bounded(10), pytest.raises(KubeError) as raised:
            kube.get("/api/v1/pods")
        elapsed = time.monotonic() - started
        answers = len(api.log)
    assert raised.value.status == status
    assert elapsed < 1 + 1
    assert answers == 2  # waited out the timeout once, then the answer was final
    assert len(warnings) == 1 and "waiting 1.0 s" in warnings[0]
    said = re.search(r"retry after (\d+) s", warnings[0])
    assert said is not None and asked - 60 <= int(said.group(1)) <= asked


def test_a_bound_client_waits_no_longer_than_its_deadline(tmp_path: Path) -> None:
    warnings: list[str] = []
    with _busy(429, "3600") as api:
        kube = KubeClient(str(api.kubeconfig(tmp_path / "config")), timeout=30, warn=warnings.append)
        started = time.monotonic()
        with bounded(10), pytest.raises(KubeError):
            kube.within(started + 1).get("/api/v1/pods")
        elapsed = time.monotonic() - started
    assert elapsed < 1 + 1
    assert len(warnings) == 1 and "retry after 3600 s" in warnings[0]
