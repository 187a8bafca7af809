"""Leader election on a Lease, against an in-memory Lease endpoint with the API server's optimistic concurrency
(desched.executor.leaderelection; tests/cluster/test_run_resilience.py runs it against the real API server)."""

from __future__ import annotations

import argparse
import copy
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from desched.errors import KubeError, UsageError
from desched.executor.leaderelection import LeaderElector, LeaseConfig, add_arguments, lease_config

Json = dict[str, Any]
CONFIG = LeaseConfig("kube-system", "descheduler", lease_duration=15, renew_deadline=10, retry_period=2)
PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/descheduler"


class Leases:
    """One Lease: GET, POST (409 when it exists), PUT (409 unless ``metadata.resourceVersion`` is the current one)."""

    def __init__(self) -> None:
        self.lease: Json | None = None
        self.version = 0
        self.failing = False
        self.before_put: Callable[[], None] | None = None  # runs once, just before the next PUT is applied

    def get(self, path: str, params: Any = None) -> Json:
        return self.request("GET", path)

    def within(self, deadline: float) -> Leases:
        return self  # answers at once: no Retry-After to bound

    def request(self, method: str, path: str, params: Any = None, body: Any = None) -> Json:
        if self.failing:
            raise KubeError(f"{method} {path}: 500 etcdserver: request timed out", 500)
        if method == "GET":
            if self.lease is None:
                raise KubeError(f"GET {path}: 404 not found", 404)
            return copy.deepcopy(self.lease)
        if method == "POST":
            assert path == PATH.rsplit("/", 1)[0]
            if self.lease is not None:
                raise KubeError("POST: 409 already exists", 409)
            return self._store(body)
        assert method == "PUT" and path == PATH
        if self.before_put is not None:
            hook, self.before_put = self.before_put, None
            hook()
        assert self.lease is not None
        if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
            raise KubeError("PUT: 409 the object has been modified", 409)
        return self._store(body)

    def _store(self, body: Json) -> Json:
        self.version += 1
        self.lease = copy.deepcopy(body)
        self.lease["metadata"] = {**body["metadata"], "resourceVersion": str(self.version)}
        return copy.deepcopy(self.lease)

    @property
    def spec(self) -> Json:
        assert self.lease is not None
        return dict(self.lease["spec"])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _elector(leases: Leases, holder: str, clock: Callable[[], float], **options: Any) -> LeaderElector:
    return LeaderElector(leases, options.pop("config", CONFIG), holder, clock=clock, **options)  # type: ignore[arg-type]


def test_the_first_candidate_creates_the_lease() -> None:
    leases, clock = Leases(), Clock()
    a = _elector(leases, "a", clock)
    assert a.try_acquire_or_renew() and a.leading()
    spec = leases.spec
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == ("a", 15, 0)
    assert spec["acquireTime"] == spec["renewTime"] and spec["renewTime"].endswith("Z")


def test_a_standby_takes_over_once_the_record_stood_still_for_the_lease_duration() -> None:
    leases, clock, lost = Leases(), Clock(), []
    a = _elector(leases, "a", clock, on_lost=lambda: lost.append("a"))
    b = _elector(leases, "b", clock)
    assert a.try_acquire_or_renew()
    acquired = leases.spec["acquireTime"]
    assert not b.try_acquire_or_renew()
    clock.now += 14.9
    assert not b.try_acquire_or_renew()
    clock.now += 0.2
    assert b.try_acquire_or_renew() and b.leading()
    spec = leases.spec
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    assert spec["acquireTime"] != acquired
    assert not a.leading() and a.lost.is_set() and lost == ["a"]  # its renew deadline (10 s) passed long ago
    assert not a.try_acquire_or_renew()


def test_renewing_keeps_the_acquire_time_and_restarts_the_standbys_wait() -> None:
    leases, clock = Leases(), Clock()
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_acquire_or_renew()
    first = leases.spec
    assert not b.try_acquire_or_renew()
    clock.now += 9
    assert a.try_acquire_or_renew() and a.leading()
    renewed = leases.spec
    assert renewed["acquireTime"] == first["acquireTime"] and renewed["leaseTransitions"] == 0
    assert renewed["renewTime"] > first["renewTime"]
    clock.now += 9  # 18 s after b first saw the Lease, but only 9 s after it changed
    assert not b.try_acquire_or_renew()
    assert leases.spec["holderIdentity"] == "a"


def test_of_two_candidates_racing_for_an_expired_lease_only_one_wins() -> None:
    leases, clock = Leases(), Clock()
    assert _elector(leases, "gone", clock).try_acquire_or_renew()
    b, c = _elector(leases, "b", clock), _elector(leases, "c", clock)
    assert not b.try_acquire_or_renew() and not c.try_acquire_or_renew()
    clock.now += 16
    leases.before_put = lambda: c.try_acquire_or_renew() or pytest.fail("c should win")
    assert not b.try_acquire_or_renew()  # its PUT carried the resourceVersion c's write replaced: 409
    assert leases.spec["holderIdentity"] == "c" and leases.spec["leaseTransitions"] == 1
    assert c.leading() and not b.leading()


def test_release_hands_the_lease_over_at_once() -> None:
    leases, clock = Leases(), Clock()
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    a.release()
    spec = leases.spec
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == ("", 1, 0)
    assert b.try_acquire_or_renew() and leases.spec["leaseTransitions"] == 1


def test_release_leaves_a_lease_someone_else_took_alone() -> None:
    leases, clock = Leases(), Clock()
    a = _elector(leases, "a", clock)
    assert a.try_acquire_or_renew()
    assert leases.lease is not None
    leases.lease["spec"]["holderIdentity"] = "thief"
    a.release()
    assert leases.spec["holderIdentity"] == "thief" and leases.spec["leaseDurationSeconds"] == 15


def test_the_renewal_thread_keeps_the_lease_and_loses_it_when_the_api_fails() -> None:
    fast = LeaseConfig("kube-system", "descheduler", lease_duration=1, renew_deadline=0.3, retry_period=0.05)
    leases, lost = Leases(), threading.Event()
    a = _elector(leases, "a", time.monotonic, config=fast, on_lost=lost.set)
    try:
        assert a.acquire(threading.Event())
        first = leases.spec["renewTime"]
        time.sleep(0.2)
        assert leases.spec["renewTime"] > first and a.leading()
        leases.failing = True
        assert lost.wait(2) and not a.leading()
    finally:
        a.release()


def test_acquire_gives_up_when_stopped() -> None:
    fast = LeaseConfig("kube-system", "descheduler", lease_duration=1, renew_deadline=0.3, retry_period=0.05)
    leases, stop = Leases(), threading.Event()
    holder = _elector(leases, "a", time.monotonic, config=fast)
    assert holder.try_acquire_or_renew()
    leases.lease["spec"]["leaseDurationSeconds"] = 60  # type: ignore[index]
    timer = threading.Timer(0.2, stop.set)
    timer.start()
    assert not _elector(leases, "b", time.monotonic, config=fast).acquire(stop)
    assert leases.spec["holderIdentity"] == "a"


def test_the_flags_default_to_upstreams_values() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([])
    assert args.leader_elect is False
    assert lease_config(args) == LeaseConfig("kube-system", "descheduler", 137, 107, 26)
    args = parser.parse_args(["--leader-elect-renew-deadline", "31s"])
    with pytest.raises(UsageError, match=r"renew-deadline must be greater than 1.2 x"):
        lease_config(args)


def test_a_leaders_renewal_waits_for_no_retry_after_past_its_renew_deadline(tmp_path: Path) -> None:
    """A leader whose renewal the server answers 429 with an hour's Retry-After gives the try up by its renew
    deadline, not its request timeout (30 s here): past the deadline it leads no more, whatever comes back."""
    from desched.runtime.kube import KubeClient
    from tests.fakeapi import Answer, FakeApi, bounded

    stored: dict[str, Any] = {}

    def route(method: str, path: str) -> Answer:
        if method == "GET" and not stored:
            return Answer(404, {"kind": "Status", "message": "not found"})
        if stored.get("busy"):
            return Answer(429, {"kind": "Status", "message": "busy"}, (("Retry-After", "3600"),))
        stored["busy"] = True  # the first write takes; every later request is answered busy
        return Answer(201, {"metadata": {"resourceVersion": "1"}, "spec": {}})

    config = LeaseConfig("kube-system", "descheduler", lease_duration=15, renew_deadline=2, retry_period=1)
    with FakeApi(route) as api:
        kube = KubeClient(str(api.kubeconfig(tmp_path / "config")), timeout=30, warn=lambda _: None)
        elector = LeaderElector(kube, config, "me")
        assert elector.try_acquire_or_renew()
        started = time.monotonic()
        with bounded(20):
            renewed = elector.try_acquire_or_renew()
        elapsed = time.monotonic() - started
    assert not renewed
    assert elapsed < config.renew_deadline + 1
