"""The HTTP layer: same uid back, 400/413 with a message and never a 5xx (fuzzed), metrics, readiness, logs."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import threading
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desched.runtime.collector import freeze_survivors
from desched.webhook.app import STAGES, JsonFormatter, Reviewer, create_app, create_ops_app
from desched.webhook.decision import Options

Json = dict[str, Any]
POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
    "    deschedule:\n      enabled: [PodLifeTime]\n"
)
SECRET = "s3cr3t-value-that-must-never-be-logged"


def review(obj: Json | None, uid: str = "uid-7", operation: str = "CREATE", kind: str = "ConfigMap") -> Json:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": kind},
            "operation": operation,
            "object": obj,
        },
    }


def configmap(text: str) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "d", "namespace": "kube-system"},
        "data": {"policy.yaml": text, "note": SECRET},
    }


@pytest.fixture
def reviewer() -> Reviewer:
    return Reviewer(Options(), max_body_bytes=64 * 1024)


@pytest.fixture
def client(reviewer: Reviewer) -> TestClient:
    return TestClient(create_app(reviewer))


def test_the_answer_carries_the_request_uid_and_the_decision(client: TestClient) -> None:
    answer = client.post("/validate", json=review(configmap(POLICY)))
    assert answer.status_code == 200
    body = answer.json()
    assert body["apiVersion"] == "admission.k8s.io/v1" and body["kind"] == "AdmissionReview"
    assert body["response"]["uid"] == "uid-7" and body["response"]["allowed"] is False
    assert "DS203" in body["response"]["status"]["message"]


def test_oversized_bodies_get_413_and_malformed_ones_400(client: TestClient) -> None:
    huge = client.post("/validate", content=b"{" + b" " * (64 * 1024) + b"}")
    assert huge.status_code == 413 and huge.json() == {"message": "the body exceeds 65536 bytes"}
    assert client.post("/validate", content=b"\xff\xfe").status_code == 400
    wrong = client.post("/validate", json={"kind": "Pod"})
    assert wrong.status_code == 400 and wrong.json()["message"].startswith("expected an AdmissionReview")


def test_a_decision_over_budget_is_answered_not_dropped(reviewer: Reviewer, monkeypatch: pytest.MonkeyPatch) -> None:
    from desched.webhook import app as webhook_app

    def slow(*args: Any) -> Any:
        time.sleep(0.5)
        raise AssertionError("never used")

    monkeypatch.setattr(reviewer.decisions, "decide", slow)
    monkeypatch.setattr(webhook_app, "INLINE_BYTES", 0)  # every decision in the thread pool, under the budget
    reviewer.budget = 0.05
    client = TestClient(create_app(reviewer))
    policy = client.post("/validate", json=review(configmap(POLICY))).json()["response"]
    assert (
        policy["allowed"] is False
        and policy["status"]["message"] == "desched: not checked: validation did not finish within 0.05s"
    )
    workload = client.post("/validate", json=review({"kind": "Deployment"}, kind="Deployment")).json()["response"]
    assert workload["allowed"] is True and workload["warnings"] == [
        "desched: not checked: validation did not finish within 0.05s"
    ]


class ActivePolicy:
    """A cluster view whose active policy is kube-system/d (the ConfigMap the tests send)."""

    def policy(self) -> None:
        return None

    def objects(self) -> list[Json]:
        return []

    def is_active_policy(self, namespace: str, name: str) -> bool:
        return (namespace, name) == ("kube-system", "d")


@pytest.mark.parametrize(
    ("obj", "kind", "cluster", "expected"),
    [
        (configmap(POLICY), "ConfigMap", None, True),
        (configmap(POLICY), "ConfigMap", ActivePolicy(), False),  # its update is checked against every cached workload
        (configmap(POLICY + "x: &a [1]\ny: *a\n"), "ConfigMap", None, False),  # an alias may expand beyond the size
        (configmap(POLICY + "#" * 20_000), "ConfigMap", None, False),
        ({"kind": "KubeDescheduler", "spec": {}}, "KubeDescheduler", None, True),
        ({"kind": "Deployment"}, "Deployment", None, False),  # reads the cluster cache
    ],
)
def test_only_small_policy_objects_are_decided_on_the_event_loop(
    obj: Json, kind: str, cluster: Any, expected: bool
) -> None:
    request = review(obj, kind=kind)["request"]
    assert Reviewer(Options(), cluster).inline(request, json.dumps(request).encode()) is expected


def test_an_object_seen_before_is_answered_from_the_cache_with_its_own_uid(
    reviewer: Reviewer, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = client.post("/validate", json=review(configmap(POLICY), uid="a")).json()["response"]
    from desched.webhook import cache as webhook_cache

    monkeypatch.setattr(webhook_cache, "decide", lambda *args: pytest.fail("decided again"))
    again = client.post("/validate", json=review(configmap(POLICY), uid="b")).json()["response"]
    assert again == {**first, "uid": "b"}
    assert "desched_webhook_decision_cache_hits_total 1" in reviewer.metrics.exposition()


@pytest.mark.parametrize(
    "change",
    [
        lambda obj: obj["data"].update({"policy.yaml": POLICY + "# edited\n"}),
        lambda obj: obj["metadata"].update({"name": "other"}),
        lambda obj: obj["metadata"].update({"annotations": {"desched.io/skip-validation": "incident 42"}}),
        lambda obj: obj.update({"data": dict(reversed(obj["data"].items()))}),  # locations follow the received order
        lambda obj: obj["metadata"].update({"namespace": "other"}),
        lambda obj: obj.update({"apiVersion": "v2"}),
        lambda obj: obj["metadata"].update({"annotations": {"desched.io/skip-validation": None}}),
    ],
)
def test_a_changed_object_is_decided_again(reviewer: Reviewer, client: TestClient, change: Any) -> None:
    client.post("/validate", json=review(configmap(POLICY)))
    changed = configmap(POLICY)
    change(changed)
    client.post("/validate", json=review(changed))
    assert "desched_webhook_decision_cache_hits_total 0" in reviewer.metrics.exposition()


def test_metadata_the_decision_does_not_read_still_finds_it_in_the_cache(
    reviewer: Reviewer, client: TestClient
) -> None:
    client.post("/validate", json=review(configmap(POLICY)))
    changed = configmap(POLICY)
    changed["metadata"].update(
        {
            "labels": {"team": "a"},
            "resourceVersion": "7",
            "managedFields": [{"manager": "m"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        }
    )
    client.post("/validate", json=review(changed))
    assert "desched_webhook_decision_cache_hits_total 1" in reviewer.metrics.exposition()


def test_the_active_policy_is_decided_every_time() -> None:
    reviewer = Reviewer(Options(), ActivePolicy())
    client = TestClient(create_app(reviewer))
    for uid in ("a", "b"):
        assert client.post("/validate", json=review(configmap(POLICY), uid=uid)).status_code == 200
    assert "desched_webhook_decision_cache_hits_total 0" in reviewer.metrics.exposition()


def test_metrics_readiness_and_health(reviewer: Reviewer, client: TestClient) -> None:
    client.post("/validate", json=review(configmap(POLICY)))
    client.post("/validate", json=review(None, operation="DELETE"))
    client.post("/validate", content=b"nope")
    ready = [False]
    ops = TestClient(create_ops_app(reviewer, lambda: ready[0]))
    assert ops.get("/healthz").status_code == 200
    assert ops.get("/readyz").status_code == 503
    ready[0] = True
    assert ops.get("/readyz").status_code == 200
    text = ops.get("/metrics").text
    assert 'desched_webhook_requests_total{operation="CREATE",result="denied",mode="enforce"} 1' in text
    assert 'desched_webhook_requests_total{operation="DELETE",result="allowed",mode="enforce"} 1' in text
    assert 'desched_webhook_rule_hits_total{rule="DS203"} 1' in text
    assert 'desched_webhook_bad_requests_total{code="400"} 1' in text
    assert "desched_webhook_request_duration_seconds_count 2" in text
    assert "desched_webhook_stage_cpu_seconds_total" not in text  # counted only when asked for


def test_stage_times_count_the_cpu_of_each_stage_of_a_decided_request() -> None:
    timed = Reviewer(Options(), stage_times=True)
    client = TestClient(create_app(timed))
    for number in range(20):  # a distinct policy each time: decided, not answered from the cache
        client.post("/validate", json=review(configmap(POLICY.replace("name: p", f"name: p{number}"))))
    lines = timed.metrics.exposition().splitlines()
    series = 'desched_webhook_stage_cpu_seconds_total{stage="'
    totals = {line[len(series) :].split('"')[0]: float(line.split()[-1]) for line in lines if line.startswith(series)}
    assert set(totals) == set(STAGES) and all(total > 0 for total in totals.values()), totals
    assert totals["decide"] > totals["decode"]  # linting a policy costs more than decoding its review


def test_logs_are_json_with_the_uid_and_never_the_data(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="desched.webhook"):
        client.post("/validate", json=review(configmap(POLICY), uid="uid-log"))
    lines = [JsonFormatter().format(record) for record in caplog.records]
    entries = [json.loads(line) for line in lines]
    assert [entry["uid"] for entry in entries if entry["msg"] == "admission"] == ["uid-log"]
    assert all(SECRET not in line and "DeschedulerPolicy" not in line for line in lines)


MALFORMED = st.one_of(
    st.binary(max_size=200),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=20,
    ).map(lambda value: json.dumps(value).encode()),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["admission.k8s.io/v1", "v1", ""]),
            "kind": st.sampled_from(["AdmissionReview", "Other"]),
            "request": st.one_of(
                st.none(),
                st.text(max_size=5),
                st.fixed_dictionaries(
                    {
                        "uid": st.one_of(st.text(max_size=8), st.integers(), st.none()),
                        "kind": st.one_of(
                            st.fixed_dictionaries(
                                {
                                    "kind": st.sampled_from(
                                        ["ConfigMap", "KubeDescheduler", "Deployment", "PodDisruptionBudget", "Pod", ""]
                                    )
                                }
                            ),
                            st.text(),
                        ),
                        "operation": st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", 5]),
                        "object": st.one_of(
                            st.none(),
                            st.text(max_size=5),
                            st.dictionaries(
                                st.sampled_from(["metadata", "data", "spec", "kind", "apiVersion"]),
                                st.one_of(
                                    st.none(),
                                    st.text(max_size=30),
                                    st.dictionaries(st.text(max_size=8), st.text(max_size=60), max_size=3),
                                ),
                                max_size=5,
                            ),
                        ),
                    }
                ),
            ),
        }
    ).map(lambda value: json.dumps(value).encode()),
)


def post(app: Any, body: bytes) -> tuple[int, bytes]:
    """One POST /validate straight through the ASGI interface (no HTTP client: the fuzzing is about the app)."""
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> Json:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Json) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": "/validate",
        "raw_path": b"/validate",
        "root_path": "",
        "scheme": "https",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8443),
    }
    asyncio.run(app(scope, receive, send))
    return answer["status"], answer["body"]


FUZZ_APP = create_app(Reviewer(Options(), max_body_bytes=64 * 1024))


@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=MALFORMED)
def test_ten_thousand_malformed_requests_never_get_a_5xx(body: bytes) -> None:
    status, answer = post(FUZZ_APP, body)
    assert status in (200, 400, 413), answer
    if status == 200:
        assert json.loads(answer)["response"]["uid"] == json.loads(body)["request"]["uid"]


def test_memory_stays_bounded_under_malformed_load() -> None:
    import tracemalloc

    bodies = [b"{", b"[]", json.dumps(review({"data": {"p": "x" * 1000}})).encode(), b"\x00" * 5000]
    tracemalloc.start()
    for body in bodies * 50:
        post(FUZZ_APP, body)
    baseline = tracemalloc.get_traced_memory()[0]
    for body in bodies * 500:
        post(FUZZ_APP, body)
    grown = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    assert grown < 2 * 2**20, f"{grown} bytes retained after 2,000 more requests"


def lone() -> st.SearchStrategy[str]:
    """Text holding one lone surrogate (``st.text`` makes none, so nothing pairs it)."""
    surrounding = st.text(max_size=12)
    return st.tuples(surrounding, st.integers(0xD800, 0xDFFF), surrounding).map(lambda t: t[0] + chr(t[1]) + t[2])


def workload(name: str, args: list[str]) -> Json:
    container = {"name": "descheduler", "image": "registry.k8s.io/descheduler/descheduler:v0.30.1", "args": args}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ops"},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
    }


SURROGATE_OBJECTS = st.one_of(
    lone().map(lambda text: ("ConfigMap", configmap(POLICY + "# " + text))),
    lone().map(lambda key: ("ConfigMap", {**configmap(POLICY), "data": {key: POLICY}})),
    lone().map(lambda text: ("KubeDescheduler", {"kind": "KubeDescheduler", "spec": {"profiles": [text]}})),
    st.tuples(lone(), lone()).map(lambda t: ("Deployment", workload(t[0], ["--policy-config-file", t[1]]))),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(uid=st.one_of(lone(), st.just("uid-7")), sent=st.one_of(st.none(), SURROGATE_OBJECTS))
def test_lone_surrogates_anywhere_get_an_admission_review_with_the_uid(uid: str, sent: tuple[str, Json] | None) -> None:
    kind, obj = sent or ("ConfigMap", configmap(POLICY))
    body = json.dumps(review(obj, uid=uid, kind=kind)).encode()  # ensure_ascii: the surrogate is a JSON escape
    status, answer = post(FUZZ_APP, body)
    assert status == 200, answer
    assert answer.isascii()
    decided = json.loads(answer)["response"]
    assert decided["uid"] == uid  # the escape sent comes back: the API server matches the uid as it read it
    said = " ".join([decided.get("status", {}).get("message", ""), *decided.get("warnings", [])])
    assert ("lone surrogate" in said) == (sent is not None)
    assert decided["allowed"] is (sent is not None and kind == "Deployment")  # a policy fails closed; DS203 denies


def test_a_lone_surrogate_in_policy_data_is_denied_by_name_without_a_traceback(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="desched")
    answer = client.post("/validate", content=json.dumps(review(configmap(POLICY + "# \ud800"))).encode())
    decided = answer.json()["response"]
    assert answer.status_code == 200 and decided["allowed"] is False
    assert decided["status"]["message"] == (
        "desched: not checked: /object/data/policy.yaml holds a lone surrogate (half a UTF-16 pair), which is not text"
    )
    assert not [record for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]
    warned = Reviewer(Options(mode="warn")).answer
    decision = asyncio.run(warned(review(configmap("\udc00"))["request"], b"\\udc00", time.perf_counter()))
    assert decision.allowed and decision.warnings == [decision.message]


def crowded_descheduler(number: int, containers: int = 10_000) -> Json:
    """A descheduler Deployment of ``containers`` containers (about 1.5 MB as JSON), each with its own unmounted
    policy file: the deployment rules judge every one (about 1.5 s in all)."""
    obj = workload(f"descheduler-{number}", ["--descheduling-interval=5m"])
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    crowd = [{**container, "name": f"c{i}", "args": [f"--policy-config-file=/p{i}"]} for i in range(containers)]
    obj["spec"]["template"]["spec"]["containers"] = crowd
    return obj


class _Conditions:
    """What the process was doing during a timed run, for a timing assertion's message: the time the cyclic
    collector paused it (per generation), its CPU time, its threads and the host's load."""

    def __init__(self) -> None:
        self.paused = [0.0, 0.0, 0.0]
        self._started = 0.0
        self._cpu = time.process_time()

    def _collecting(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.paused[info["generation"]] += time.perf_counter() - self._started

    def __enter__(self) -> _Conditions:
        gc.callbacks.append(self._collecting)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._collecting)
        self.cpu = time.process_time() - self._cpu

    def __repr__(self) -> str:
        threads = sorted(thread.name for thread in threading.enumerate())
        return (
            f"gc pauses per generation {[round(paused, 2) for paused in self.paused]} s, process cpu {self.cpu:.2f} s, "
            f"tracked objects {len(gc.get_objects())}, frozen {gc.get_freeze_count()}, threads {threads}, "
            f"load {os.getloadavg()}"
        )


@pytest.mark.parametrize("cached", [False, True], ids=["no-cluster-cache", "cluster-cache"])
def test_a_flood_of_large_descheduler_workloads_is_answered_within_the_workload_webhooks_timeout(cached: bool) -> None:
    from desched.webhook.review import parse_review
    from tests.webhook.test_workload_index import EVICTING, new_cache

    reviewer = Reviewer(Options(), cluster=new_cache(EVICTING) if cached else None)
    bodies = [json.dumps(review(crowded_descheduler(n), f"w{n}", kind="Deployment")).encode() for n in range(12)]
    small = json.dumps(review(configmap(POLICY), "policy")).encode()

    async def one(body: bytes, arrival: float) -> tuple[Any, float]:
        decision = await reviewer.answer(parse_review(body), body, arrival)
        return decision, time.perf_counter() - arrival

    async def flood() -> tuple[list[tuple[Any, float]], float]:
        reviewer.pool.start()
        await asyncio.sleep(2)  # the workers have started: the flood meets a running pool
        arrival = time.perf_counter()
        crowd = [asyncio.ensure_future(one(body, arrival)) for body in bodies]
        await asyncio.sleep(0.2)
        policy = await one(small, arrival + 0.2)  # sent meanwhile: it arrived 0.2 s after the flood
        answered = [*await asyncio.gather(*crowd), policy]
        cpu = time.process_time()
        await asyncio.sleep(1)
        return answered, time.process_time() - cpu

    # The server leaves what its start-up made out of full collections (desched.webhook.server.run); so is what the
    # tests before this one left in pytest's process, which would otherwise be walked by every full collection that
    # the flood's allocations trigger (1.7 s of pauses measured in a whole-suite run).
    freeze_survivors()
    try:
        with _Conditions() as conditions:
            answers, after = asyncio.run(flood())
    finally:
        reviewer.pool.close()
        gc.unfreeze()
    *workloads, (policy, policy_seconds) = answers
    timings = {"policy": round(policy_seconds, 2), "workloads": [round(seconds, 2) for _, seconds in workloads]}
    # The workload webhook's timeout is 3 s; an answer leaves at most 0.5 s after the 2.5 s budget.
    assert max(seconds for _, seconds in workloads) < 3.0, (timings, conditions)
    assert all(decision.allowed for decision, _ in workloads)  # decided, or not checked (the webhook fails open)
    assert any("not checked" in " ".join(decision.warnings) for decision, _ in workloads)  # more than the pool takes
    assert after < 0.5  # nothing decides on in the server once the answers left (a worker out of time is stopped)
    # decided meanwhile, not after them
    assert policy.rules == ["DS203"] and policy_seconds < 1.5, (timings, conditions)


def test_only_post_validate_is_served(client: TestClient) -> None:
    assert client.get("/validate").status_code == 405
    assert client.post("/other", json=review(configmap(POLICY))).status_code == 404
