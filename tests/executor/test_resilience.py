"""``desched run``'s resilience without a cluster: backoff, retried evictions and their outcomes, the cycle guard, the
loop's waits and the exit statuses (desched.executor.resilience, desched.executor.live)."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path
from typing import Any

import pytest

from desched.cli import main
from desched.errors import KubeError
from desched.executor import live
from desched.executor.cluster import Cluster
from desched.executor.evictions import (
    BackendError,
    CycleHalted,
    EvictionFailure,
    Failure,
    Limits,
    Outcome,
    PodEvictor,
)
from desched.executor.metrics import ExecutorMetrics
from desched.executor.resilience import (
    CYCLE_RETRY_BASE,
    DEADLINE,
    LOST,
    TERMINATED,
    CycleGuard,
    backoff,
    classify,
    evict_with_retries,
    exit_status,
    list_with_retries,
    next_wait,
)
from tests.executor.builders import build_node, build_pod, set_rs_owner


def test_backoff_doubles_up_to_the_cap_and_jitter_keeps_half_to_all_of_it() -> None:
    assert [backoff(attempt, 0.5, 4.0) for attempt in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert backoff(3, 0.5, 4.0, jitter=lambda: 0.0) == 1.0
    assert backoff(3, 0.5, 4.0, jitter=lambda: 0.999) == pytest.approx(2.0, rel=1e-3)


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (KubeError("429", 429), Failure.REFUSED),
        (KubeError("404", 404), Failure.GONE),
        (KubeError("403", 403), Failure.ERROR),
        (KubeError("409", 409), Failure.ERROR),
        (KubeError("500", 500), Failure.UNKNOWN),
        (KubeError("504", 504), Failure.UNKNOWN),
        (KubeError("read timed out"), Failure.UNKNOWN),
        (KubeError("connection refused", sent=False), Failure.ERROR),
    ],
)
def test_classify(error: KubeError, failure: Failure) -> None:
    assert classify(error) is failure


class Script:
    """A POST that raises the scripted errors in turn (None: success), and a pause that records its delays."""

    def __init__(self, *answers: KubeError | None, go_on: bool = True) -> None:
        self.answers = list(answers)
        self.calls = 0
        self.pauses: list[float] = []
        self.go_on = go_on

    def post(self) -> None:
        self.calls += 1
        answer = self.answers.pop(0)
        if answer is not None:
            raise answer

    def pause(self, delay: float) -> bool:
        self.pauses.append(delay)
        return self.go_on

    def run(self) -> BackendError | None:
        return evict_with_retries(self.post, self.pause, jitter=lambda: 1.0)


def test_a_success_needs_one_attempt() -> None:
    script = Script(None)
    assert script.run() is None and script.calls == 1 and script.pauses == []


def test_a_5xx_is_retried_with_backoff_until_it_succeeds() -> None:
    script = Script(KubeError("503", 503), KubeError("read timed out"), None)
    assert script.run() is None
    assert script.calls == 3 and script.pauses == [0.5, 1.0]


def test_three_ambiguous_attempts_leave_the_outcome_unknown() -> None:
    script = Script(*[KubeError("POST ...: 504 gateway timeout", 504)] * 3)
    error = script.run()
    assert error is not None and (error.failure, error.status) == (Failure.UNKNOWN, 504)
    assert "may have been evicted" in error.message
    assert script.calls == 3 and script.pauses == [0.5, 1.0]


@pytest.mark.parametrize(
    ("status", "failure"), [(429, Failure.REFUSED), (404, Failure.GONE), (403, Failure.ERROR), (400, Failure.ERROR)]
)
def test_4xx_answers_are_final(status: int, failure: Failure) -> None:
    script = Script(KubeError(f"POST ...: {status} no", status))
    error = script.run()
    assert error is not None and (error.failure, error.status) == (failure, status)
    assert script.calls == 1 and script.pauses == []
    assert error.message.endswith("(ignoring)") is (status == 429)


def test_a_connection_never_made_is_retried_and_then_certainly_failed() -> None:
    script = Script(*[KubeError("cannot reach: refused", sent=False)] * 3)
    error = script.run()
    assert error is not None and error.failure is Failure.ERROR and script.calls == 3


@pytest.mark.parametrize("status", [404, 429])
def test_after_an_ambiguous_attempt_a_404_or_429_may_be_its_own_doing(status: int) -> None:
    script = Script(KubeError("POST ...: 504", 504), KubeError(f"POST ...: {status}", status))
    error = script.run()
    assert error is not None and (error.failure, error.status) == (Failure.UNKNOWN, status)
    assert "an earlier attempt: POST ...: 504" in error.message


def test_retries_end_when_the_cycle_must_stop() -> None:
    script = Script(KubeError("POST ...: 504", 504), None, go_on=False)
    error = script.run()
    assert error is not None and error.failure is Failure.UNKNOWN and script.calls == 1


class Backend:
    def __init__(self, *errors: BackendError | None) -> None:
        self.errors = list(errors)
        self.evicted: list[str] = []

    def evict(self, pod: dict[str, Any], profile: str, plugin: str) -> BackendError | None:
        self.evicted.append(pod["metadata"]["name"])
        return self.errors.pop(0)


def _cluster(count: int) -> tuple[Cluster, list[dict[str, Any]]]:
    pods = [set_rs_owner(build_pod(f"web-{index}", 100, 0, "n1")) for index in range(count)]
    return Cluster.from_objects([build_node("n1", 4000, 4000, 110), *pods]), pods


def test_an_unknown_outcome_counts_toward_the_limits_and_the_pod_is_taken_as_evicted() -> None:
    cluster, pods = _cluster(3)
    unknown = BackendError(Failure.UNKNOWN, 504, "504 (the pod may have been evicted: counted toward the limits)")
    backend = Backend(unknown, None)
    evictor = PodEvictor(cluster, Limits(per_node=2), backend)
    assert [evictor.evict(pod, "p", "x") for pod in pods] == [Outcome.UNKNOWN, Outcome.SUCCESS, Outcome.NODE_LIMIT]
    assert backend.evicted == ["web-0", "web-1"]
    assert [(f.pod, f.status, f.outcome) for f in evictor.failures] == [("web-0", 504, "unknown")]
    assert [e.pod for e in evictor.evictions] == ["web-1"]
    assert evictor.total == 2 and evictor.by_node == {"n1": 2}
    listed = {pod["metadata"]["name"]: pod for pod in cluster.pods_on_node("n1")}
    assert listed["web-0"]["metadata"].get("deletionTimestamp") and listed["web-1"]["metadata"].get("deletionTimestamp")
    assert "deletionTimestamp" not in pods[0]["metadata"]  # the cluster replaced the object, as an informer does


def test_refused_gone_and_failed_evictions_count_toward_no_limit() -> None:
    cluster, pods = _cluster(4)
    backend = Backend(
        BackendError(Failure.REFUSED, 429, "429 (ignoring)"),
        BackendError(Failure.GONE, 404, "404"),
        BackendError(Failure.ERROR, 403, "403"),
        None,
    )
    evictor = PodEvictor(cluster, Limits(per_node=1), backend)
    outcomes = [evictor.evict(pod, "p", "x") for pod in pods]
    assert outcomes == [Outcome.FAILED, Outcome.FAILED, Outcome.FAILED, Outcome.SUCCESS]
    assert [f.outcome for f in evictor.failures] == ["refused", "gone", "error"]


def test_a_halting_checkpoint_stops_before_the_backend() -> None:
    cluster, pods = _cluster(1)
    backend = Backend(None)

    def halt() -> None:
        raise CycleHalted("deadline")

    with pytest.raises(CycleHalted):
        PodEvictor(cluster, Limits(), backend, halt).evict(pods[0], "p", "x")
    assert backend.evicted == []


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_guard_stops_for_lost_leadership_then_sigterm_then_the_deadline() -> None:
    clock, stop, leading = Clock(), threading.Event(), [True]
    guard = CycleGuard(stop, 60, lambda: leading[0], clock)
    guard.check()
    assert guard.pause(0) is True
    clock.now += 60
    assert guard.reason() == DEADLINE
    stop.set()
    assert guard.reason() == TERMINATED
    leading[0] = False
    with pytest.raises(CycleHalted, match="leadership lost"):
        guard.check()
    assert guard.halted == LOST


def test_the_guard_pause_ends_at_the_deadline() -> None:
    guard = CycleGuard(threading.Event(), 0.05)
    assert guard.pause(30) is False
    with pytest.raises(CycleHalted, match=r"deadline \(0.05 s\)"):
        guard.check()


def test_the_loop_waits_non_sliding_and_backs_off_after_failed_listings() -> None:
    assert next_wait(300, 20, 0) == 280
    assert next_wait(300, 400, 0) == 0
    assert [next_wait(10, 5, failures) for failures in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert next_wait(0.5, 0, 1) == 0.5 and CYCLE_RETRY_BASE == 1


def _failure(outcome: str) -> EvictionFailure:
    return EvictionFailure("ns", "pod", "n1", "p", "x", None, "m", outcome)


@pytest.mark.parametrize(
    ("outcomes", "halted", "status"),
    [
        ([], None, 0),
        (["refused", "gone"], None, 0),
        (["refused", "error"], None, 1),
        (["unknown"], None, 1),
        ([], DEADLINE, 1),
        ([], TERMINATED, 0),
    ],
)
def test_exit_status(outcomes: list[str], halted: str | None, status: int) -> None:
    assert exit_status([_failure(outcome) for outcome in outcomes], halted) == status


class Stop(threading.Event):
    """Records the loop's waits; sets itself after ``waits`` of them."""

    def __init__(self, waits: int) -> None:
        super().__init__()
        self.waits: list[float] = []
        self.limit = waits

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(round(timeout or 0))
        if len(self.waits) >= self.limit:
            self.set()
        return self.is_set()


def _loop(
    monkeypatch: pytest.MonkeyPatch,
    cycles: list[live.CycleDone],
    interval: float | None,
    stop: Stop,
    dry_run: bool = False,
    indexed: list[bool] | None = None,
) -> int:
    """``live._loop`` over scripted cycles; ``indexed`` receives what each cycle was told of earlier profiles."""
    scripted = iter(cycles)
    told = indexed if indexed is not None else []
    monkeypatch.setattr(live, "_cycle", lambda driver, built: told.append(built) or next(scripted))
    args = argparse.Namespace(dry_run=dry_run)
    driver = live.Driver(None, None, args, ExecutorMetrics("0"), stop, 600, None)  # type: ignore[arg-type]
    return live._loop(driver, interval)


def test_the_interval_loop_survives_failed_listings_and_ends_with_0_on_sigterm(monkeypatch: pytest.MonkeyPatch) -> None:
    failed, ran = live.CycleDone(True, [], None), live.CycleDone(False, [_failure("unknown")], None)
    stop = Stop(waits=4)
    indexed: list[bool] = []
    assert _loop(monkeypatch, [failed, failed, ran, failed], 300, stop, indexed=indexed) == 0
    assert stop.waits == [1, 2, 300, 1]
    assert indexed == [False, False, False, True]  # only a cycle after one that listed finds the profiles' indexers


def test_a_dry_run_loop_never_keeps_indexers(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = live.CycleDone(False, [], None)
    indexed: list[bool] = []
    assert _loop(monkeypatch, [ran, ran, ran], 300, Stop(waits=3), dry_run=True, indexed=indexed) == 0
    assert indexed == [False, False, False]


@pytest.mark.parametrize(
    ("done", "status"),
    [
        (live.CycleDone(True, [], None), 2),
        (live.CycleDone(False, [_failure("unknown")], None), 1),
        (live.CycleDone(False, [_failure("refused")], None), 0),
        (live.CycleDone(False, [], DEADLINE), 1),
    ],
)
def test_one_cycle_exits_with_its_status(monkeypatch: pytest.MonkeyPatch, done: live.CycleDone, status: int) -> None:
    assert _loop(monkeypatch, [done], None, Stop(waits=1)) == status


def test_cycle_failures_are_counted_by_reason() -> None:
    metrics = ExecutorMetrics("0")
    metrics.cycle_failed("list")
    metrics.cycle_failed("list")
    metrics.cycle_failed("deadline")
    metrics.evicted("unknown", "RemovePodsViolatingNodeTaints", "p", "ns", "n1")
    text = metrics.exposition()
    assert "# TYPE desched_cycle_failures_total counter" in text
    assert 'desched_cycle_failures_total{reason="list"} 2' in text
    assert 'desched_cycle_failures_total{reason="deadline"} 1' in text
    assert 'descheduler_pods_evicted_total{result="unknown",strategy="RemovePodsViolatingNodeTaints"' in text


POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
"""


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--leader-elect"], "--leader-elect must be used with --interval"),
        (["--interval", "1m", "--cycle-timeout", "0"], "--cycle-timeout must be positive"),
        (["--request-timeout", "soon"], '--request-timeout: time: invalid duration "soon"'),
        (
            ["--interval", "1m", "--leader-elect", "--leader-elect-lease-duration", "10s"],
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline",
        ),
        (
            ["--interval", "1m", "--leader-elect", "--leader-elect-resource-lock", "configmaps"],
            "only leases is supported",
        ),
    ],
)
def test_flag_errors_exit_2_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    missing = tmp_path / "no-kubeconfig"
    assert main(["run", "--policy", str(policy), "--kubeconfig", str(missing), *flags]) == 2
    assert message in capsys.readouterr().err


def test_the_eviction_apis_own_500_for_two_pdbs_is_a_definite_error_sent_once() -> None:
    """A pod under two PDBs: the handler answers a Status of code 500 and no reason, and deletes nothing."""
    script = Script(KubeError("POST ...: 500 This pod has more than one PodDisruptionBudget", 500, definite=True))
    failure = script.run()
    assert failure is not None and failure.failure is Failure.ERROR
    assert script.calls == 1 and script.pauses == []


class _Guard:
    """A :class:`CycleGuard` stand-in that allows ``waits`` pauses and records their delays."""

    def __init__(self, waits: int) -> None:
        self.waits, self.delays = waits, []

    def pause(self, delay: float) -> bool:
        self.delays.append(delay)
        self.waits -= 1
        return self.waits >= 0


@pytest.mark.parametrize(
    ("errors", "waits", "listed", "delays", "warnings"),
    [
        ([KubeError("GET /api/v1/pods: 500", 500)], 5, True, [1.0], 1),  # one 500 no longer ends a run
        ([KubeError("read timed out"), KubeError("GET: 503", 503)], 5, True, [1.0, 2.0], 2),
        ([KubeError("GET /api/v1/pods: 403 forbidden", 403)], 5, False, [], 0),  # not transient: at once
        ([KubeError("GET: 500", 500)] * 3, 1, False, [1.0, 2.0], 1),  # the deadline came first
    ],
)
def test_a_one_shot_run_lists_again_after_a_transient_failure(errors, waits, listed, delays, warnings) -> None:
    pending = list(errors)

    def listing() -> list[Any]:
        if pending:
            raise pending.pop(0)
        return ["pod"]

    guard, warned = _Guard(waits), []
    if listed:
        assert list_with_retries(listing, guard, warned.append) == ["pod"]  # type: ignore[arg-type]
    else:
        with pytest.raises(KubeError):
            list_with_retries(listing, guard, warned.append)  # type: ignore[arg-type]
    assert guard.delays == delays and len(warned) == warnings
