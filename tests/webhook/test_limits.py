"""Bounded work per request: policy limits checked before parsing, a bounded worker pool, a budget that stops work."""

from __future__ import annotations

import json
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from desched.webhook.app import Reviewer, create_app
from desched.webhook.decision import Options
from desched.webhook.limits import PolicyLimits
from tests.webhook.server import policy_review, policy_text, start
from tests.webhook.test_app import POLICY, configmap, review

Json = dict[str, Any]
MB = 2**20


@pytest.mark.parametrize(
    ("limits", "text", "named"),
    [
        (PolicyLimits(max_bytes=100), POLICY, "policy text of 133 bytes exceeds the limit of 100 bytes"),
        (PolicyLimits(max_documents=2), POLICY + "---\na: 1\n---\nb: 2\n", "3 YAML documents exceed the limit of 2"),
        (PolicyLimits(max_profiles=1), POLICY + "- name: q\n", "2 profiles exceed the limit of 1"),
        (PolicyLimits(max_nodes=10), POLICY, "YAML nodes exceed the limit of 10"),
    ],
)
def test_each_limit_is_named(limits: PolicyLimits, text: str, named: str) -> None:
    reason = limits.exceeded("ConfigMap", configmap(text))
    assert reason is not None and reason.startswith("data[policy.yaml]: ") and named in reason


def test_profiles_are_counted_in_their_sequence_only() -> None:
    text = policy_text(1, 20_000)
    profiles = text.count("\n- name: ")
    assert PolicyLimits(max_profiles=profiles).exceeded("ConfigMap", configmap(text)) is None
    assert f"{profiles} profiles" in str(PolicyLimits(max_profiles=profiles - 1).exceeded("ConfigMap", configmap(text)))


def test_objects_are_limited_as_received() -> None:
    kube = {"kind": "KubeDescheduler", "spec": {"profiles": ["a", "b", "c"]}}
    assert PolicyLimits().exceeded("KubeDescheduler", kube) is None
    assert "3 profiles exceed the limit of 2" in str(PolicyLimits(max_profiles=2).exceeded("KubeDescheduler", kube))
    assert "nodes exceed the limit of 5" in str(PolicyLimits(max_nodes=5).exceeded("KubeDescheduler", kube))


@pytest.mark.parametrize(("mode", "allowed"), [("enforce", False), ("warn", True)])
def test_over_the_limits_or_busy_is_answered_at_once_per_failure_policy(mode: str, allowed: bool) -> None:
    reviewer = Reviewer(Options(mode), limits=PolicyLimits(max_bytes=64))
    client = TestClient(create_app(reviewer))
    over = client.post("/validate", json=review(configmap(POLICY))).json()["response"]
    reason = (
        "desched: not checked: policy over the limits: "
        "data[policy.yaml]: policy text of 133 bytes exceeds the limit of 64"
    )
    assert over["allowed"] is allowed and reason in (
        over.get("status", {}).get("message", "") + str(over.get("warnings"))
    )
    reviewer.limits = PolicyLimits()
    reviewer.pool.full = lambda: True  # type: ignore[method-assign]
    busy = client.post("/validate", json=review(configmap(policy_text(2, 20_000)))).json()["response"]
    text = busy.get("status", {}).get("message", "") + str(busy.get("warnings"))
    assert busy["allowed"] is allowed and "desched: not checked: webhook busy: 6 decisions running or queued" in text
    assert reviewer.pool.pids() == []  # answered without a worker


def _stopped(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` runs no more within ``within`` seconds (a kill is delivered asynchronously): gone, or
    dead and not yet reaped (a zombie; the pool reaps it in a thread while its replacement starts)."""
    end = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X") or time.monotonic() > end:
            return state in ("Z", "X")
        time.sleep(0.01)


def test_the_budget_stops_the_work_and_the_worker_is_replaced() -> None:
    reviewer = Reviewer(Options(), budget=30)
    reviewer.pool.start()
    try:
        with TestClient(create_app(reviewer)) as client:
            medium = json.loads(policy_review(1, 40_000))
            assert client.post("/validate", json=medium).json()["response"]["allowed"] is True  # workers are up
            before = reviewer.pool.pids()
            reviewer.budget = 0.2  # a 1 MB policy takes longer than that to decide
            slow = client.post("/validate", json=json.loads(policy_review(2, MB, keys=8))).json()["response"]
            assert slow["status"]["message"] == "desched: not checked: validation did not finish within 0.2s"
            assert reviewer.pool.replaced == 1
            killed = set(before) - set(reviewer.pool.pids())
            assert len(killed) == 1 and _stopped(killed.pop())  # the work really stopped
            reviewer.budget = 30
            again = client.post("/validate", json=json.loads(policy_review(3, 40_000))).json()["response"]
            assert again["allowed"] is True and again["uid"] == "uid-3"
    finally:
        reviewer.pool.close()


def test_a_flood_of_large_policies_is_answered_within_the_budget_in_bounded_memory() -> None:
    """8 distinct 1 MB policy ConfigMaps at once (8 keys each, within the limits) and 2 over the size limit, against
    2 workers and a queue of 1: every answer within the budget and some slack, the over-limit ones refused naming the
    limit, those beyond the queue answered busy, and the server's processes inside the Deployment's 1Gi."""
    with tempfile.TemporaryDirectory() as work:
        server = start(Path(work), "--queue", "1")
        probes: list[float] = []
        flooding = threading.Event()

        def probe() -> None:  # the kubelet's probes, during the flood
            while not flooding.is_set():
                started = time.perf_counter()
                url = f"http://127.0.0.1:{server.metrics_port}/healthz"
                with urllib.request.urlopen(url, timeout=5) as answer:
                    assert answer.status == 200
                probes.append(time.perf_counter() - started)
                time.sleep(0.05)

        prober = threading.Thread(target=probe, daemon=True)
        try:
            prober.start()
            bodies = [policy_review(seed, MB, keys=8) for seed in range(8)]
            bodies += [policy_review(seed, MB) for seed in (8, 9)]
            answers, peak = server.flood(bodies)
        finally:
            flooding.set()
            prober.join(10)
            server.stop()
    assert max(seconds for seconds, _ in answers) < 2.5 + 2.0
    assert peak < 2**30
    assert probes and max(probes) < 1.0, probes  # probes have a thread and a loop of their own
    messages = [answer.get("status", {}).get("message", "") for _, answer in answers]
    assert all("exceeds the limit of 262144 bytes" in message for message in messages[8:])
    assert not any(answer["allowed"] for _, answer in answers[8:])
    assert all(
        answer["allowed"] or "webhook busy" in message or "did not finish" in message
        for (_, answer), message in zip(answers[:8], messages[:8], strict=True)
    )
    assert any("webhook busy: 3 decisions" in message for message in messages[:8])


def test_a_burst_beyond_the_pool_is_answered_busy_at_once() -> None:
    """Requests of one loop turn all see the calls before them: with 1 worker and a queue of 1, a burst of 5 large
    policies is 2 decisions and 3 busy answers given at once, not 5 calls queued until the budget runs out."""
    import asyncio

    from desched.webhook.app import Busy

    reviewer = Reviewer(Options(), budget=10, workers=1, queue=1)
    bodies = [policy_review(seed, 200_000) for seed in range(5)]

    async def burst() -> list[tuple[str, float]]:
        started = time.perf_counter()

        async def one(body: bytes) -> tuple[str, float]:
            try:
                await reviewer._pooled(body, time.perf_counter() + 10)
            except Busy:
                return "busy", time.perf_counter() - started
            return "decided", time.perf_counter() - started

        return await asyncio.gather(*(one(body) for body in bodies))

    try:
        outcomes = asyncio.run(burst())
    finally:
        reviewer.pool.close()
    assert sorted(kind for kind, _ in outcomes) == ["busy"] * 3 + ["decided"] * 2
    assert all(seconds < 0.5 for kind, seconds in outcomes if kind == "busy")
