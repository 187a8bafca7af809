"""The control plane is real: RBAC denies, PDBs make evictions fail with 429, and admission webhooks are called."""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.kcp.api import Api, ApiError, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.kubelet import FakeKubelet
from tests.kcp.objects import pdb, pod, wait_for
from tests.webhook.server import write_certificates

pytestmark = pytest.mark.cluster


def test_rbac_denies_an_unprivileged_token(control_plane: ControlPlane, kube: Api, namespace: str) -> None:
    with control_plane.api("unprivileged") as nobody, pytest.raises(ApiError) as denied:
        nobody.list("v1", "Pod", namespace)
    assert denied.value.status == 403
    assert denied.value.reason == "Forbidden"
    assert 'User "unprivileged" cannot list resource "pods"' in denied.value.message
    assert kube.list("v1", "Pod", namespace) == []


def test_an_unknown_token_is_unauthorized(control_plane: ControlPlane) -> None:
    with Api(control_plane.server, "not-a-token", control_plane.ca_file) as stranger, pytest.raises(ApiError) as error:
        stranger.list("v1", "Namespace")
    assert error.value.status == 401


def test_rbac_grants_what_a_role_binding_allows(control_plane: ControlPlane, kube: Api, namespace: str) -> None:
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pod-reader", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
        }
    )
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "pod-reader", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "User", "name": "unprivileged", "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )
    with control_plane.api("unprivileged") as reader:
        assert wait_for(lambda: _allowed(reader, namespace), what="the RoleBinding to take effect")
        with pytest.raises(ApiError) as denied:
            reader.evict(namespace, "anything")
    assert denied.value.status == 403


def _allowed(api: Api, namespace: str) -> bool:
    try:
        api.list("v1", "Pod", namespace)
    except ApiError:
        return False
    return True


def test_eviction_of_a_pod_protected_by_a_pdb_returns_429(
    kube: Api, kubelet: FakeKubelet, namespace: str, nodes: Any
) -> None:
    (node,) = nodes(1)
    labels = {"app": "web"}
    for index in range(3):
        kube.create(pod(f"web-{index}", namespace, node, labels))
    kube.create(pdb(kube, "web", namespace, labels, min_available=2))
    wait_for(lambda: _running(kube, namespace) == 3, what="three Running pods")
    wait_for(lambda: _allowed_disruptions(kube, namespace, "web") == 1, what="the disruption controller")

    assert kube.evict(namespace, "web-0")["status"] == "Success"
    with pytest.raises(ApiError) as refused:
        kube.evict(namespace, "web-1")
    assert refused.value.status == 429
    assert "disruption budget" in refused.value.message
    kubelet.settle()
    wait_for(
        lambda: "web-0" not in {p["metadata"]["name"] for p in kube.list("v1", "Pod", namespace)},
        what="the fake kubelet to remove the evicted pod",
    )


def test_pdbs_are_created_at_the_version_discovery_names(kube: Api, namespace: str) -> None:
    version = kube.pdb_version()
    assert version in ("policy/v1", "policy/v1beta1")
    created = kube.create(pdb(kube, "one", namespace, {"app": "x"}, max_unavailable=1))
    assert created["apiVersion"] == version
    assert kube.get(version, "PodDisruptionBudget", "one", namespace)["spec"]["maxUnavailable"] == 1


def _running(kube: Api, namespace: str) -> int:
    return sum(1 for item in kube.list("v1", "Pod", namespace) if item["status"].get("phase") == "Running")


def _allowed_disruptions(kube: Api, namespace: str, name: str) -> int | None:
    status = kube.get(kube.pdb_version(), "PodDisruptionBudget", name, namespace).get("status") or {}
    return status.get("disruptionsAllowed") if status.get("observedGeneration") else None


class _Recorder(BaseHTTPRequestHandler):
    """Denies ConfigMaps that have a ``deny`` key; records every AdmissionReview it receives."""

    reviews: list[Json]

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.reviews.append(review)  # type: ignore[attr-defined]
        request = review["request"]
        denied = "deny" in ((request.get("object") or {}).get("data") or {})
        response: Json = {"uid": request["uid"], "allowed": not denied}
        if denied:
            response["status"] = {"code": 403, "message": "the smoke test says no"}
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[tuple[ThreadingHTTPServer, bytes]]:
    ca_file = write_certificates(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.reviews = []  # type: ignore[attr-defined]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, ca_file.read_bytes()
    server.shutdown()
    server.server_close()


def test_the_api_server_calls_a_validating_webhook(
    kube: Api, namespace: str, recorder: tuple[ThreadingHTTPServer, bytes]
) -> None:
    server, ca_pem = recorder
    name = f"smoke-{namespace}"
    kube.create(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "smoke.desched.test",
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{server.server_address[1]}/validate",
                        "caBundle": base64.b64encode(ca_pem).decode(),
                    },
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["configmaps"],
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"desched.test/namespace": namespace}},
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 5,
                }
            ],
        }
    )
    try:

        def denied() -> ApiError | None:
            with contextlib.suppress(ApiError):
                kube.delete("v1", "ConfigMap", "probe", namespace)
            try:
                kube.create(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "probe", "namespace": namespace},
                        "data": {"deny": "yes"},
                    }
                )
            except ApiError as error:
                return error
            return None

        error = wait_for(denied, what="the API server to call the webhook")
        assert error.status == 403
        assert 'admission webhook "smoke.desched.test" denied the request: the smoke test says no' in error.message
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "fine", "namespace": namespace},
                "data": {"ok": "yes"},
            }
        )
    finally:
        kube.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", name)
    review = server.reviews[-1]  # type: ignore[attr-defined]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    assert review["kind"] == "AdmissionReview"
    assert review["request"]["operation"] == "CREATE"
    assert review["request"]["object"]["metadata"]["name"] == "fine"
    assert review["request"]["namespace"] == namespace
    assert review["request"]["uid"]
