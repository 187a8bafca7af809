"""The webhook's cache lists through the same client as ``desched run``: a server's ``Retry-After`` holds a listing
no longer than the client's request timeout."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from desched.linter.engine import Settings
from desched.runtime.kube import KubeClient
from desched.webhook.state import ClusterCache
from tests.fakeapi import Answer, FakeApi

TIMEOUT = 1  # seconds: the client's request timeout


def test_a_listing_answered_429_with_an_hour_to_wait_gives_up_within_the_request_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def busy(method: str, path: str) -> Answer:
        return Answer(429, {"kind": "Status", "message": "busy"}, (("Retry-After", "3600"),))

    caplog.set_level(logging.WARNING)
    with FakeApi(busy) as api:
        cache = ClusterCache(KubeClient(str(api.kubeconfig(tmp_path / "config")), timeout=TIMEOUT), None, Settings())
        started = time.monotonic()
        cache.start()
        try:
            while not any("retrying" in record.getMessage() for record in caplog.records):
                assert time.monotonic() - started < TIMEOUT + 1, "a listing still waits for the server's Retry-After"
                time.sleep(0.05)
        finally:
            cache.stop()
    assert any("asked to retry after 3600 s" in record.getMessage() for record in caplog.records)
