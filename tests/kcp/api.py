"""A small JSON REST client for the test control plane: real HTTPS, bearer tokens, discovery-driven paths.

Contract: every call returns the decoded JSON body of a 2xx response or raises :class:`ApiError` carrying the HTTP
status and the server's ``Status`` message. Resource paths come from the server's own discovery documents (like
kubectl's REST mapper), so nothing here is tied to one Kubernetes version. The client is thread-safe (one urllib3 pool).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

import urllib3

Json = dict[str, Any]


class ApiError(Exception):
    """A non-2xx answer: ``status`` is the HTTP status, ``reason`` the Status reason (``NotFound``, ``Conflict``)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class Resource(NamedTuple):
    """Where objects of one kind live: ``/api/v1`` or ``/apis/<group>/<version>``, plural name, namespaced or not."""

    prefix: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        parts = [self.prefix]
        if self.namespaced and namespace is not None:
            parts += ["namespaces", quote(namespace, safe="")]
        parts.append(self.plural)
        if name is not None:
            parts.append(quote(name, safe=""))
        if subresource is not None:
            parts.append(subresource)
        return "/".join(parts)


def pdb_api_version(group_document: Json) -> str:
    """``policy/v1`` when the ``policy`` discovery document lists v1, else ``policy/v1beta1`` (a v1.20 server)."""
    versions = {entry.get("version") for entry in group_document.get("versions", [])}
    return "policy/v1" if "v1" in versions else "policy/v1beta1"


class Api:
    """Requests to one API server as one user."""

    def __init__(self, server: str, token: str, ca_file: str, *, pool_size: int = 16, timeout: float = 30.0) -> None:
        self.server = server.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._pool = urllib3.PoolManager(
            num_pools=2, maxsize=pool_size, block=True, cert_reqs="CERT_REQUIRED", ca_certs=ca_file, retries=False
        )
        self._timeout = urllib3.Timeout(connect=5.0, read=timeout)
        self._resources: dict[tuple[str, str], Resource] = {}
        self._lock = threading.Lock()
        self.warnings: list[str] = []  # the Warning headers of the last answer (admission webhook warnings)

    def close(self) -> None:
        self._pool.clear()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Json:
        url = self.server + path + ("?" + urlencode(params) if params else "")
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        response = self._pool.request(method, url, body=data, headers=headers, timeout=self._timeout)
        self.warnings = [_warning_text(value) for value in response.headers.getlist("Warning")]
        return _decode(response.status, response.data)

    def stream(self, path: str, params: dict[str, Any]) -> Iterator[Json]:
        """Watch events (``{"type": ..., "object": ...}``) until the server ends the watch or the pool is closed."""
        url = self.server + path + "?" + urlencode({**params, "watch": "true"})
        response = self._pool.request(
            "GET", url, headers=self._headers, preload_content=False, timeout=urllib3.Timeout(connect=5.0, read=None)
        )
        try:
            if response.status != 200:
                _decode(response.status, response.read())
            buffer = b""
            for chunk in response.stream(65536, decode_content=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield json.loads(line)
        finally:
            response.release_conn()

    # -- typed helpers over discovery -----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> Resource:
        """The resource serving ``kind`` at ``api_version``, from the server's discovery (cached)."""
        key = (api_version, kind)
        with self._lock:
            if key not in self._resources:
                self._discover(api_version)
            if key not in self._resources:
                raise ApiError(404, "NotFound", f"the server serves no {kind} in {api_version}")
            return self._resources[key]

    def _discover(self, api_version: str) -> None:
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            document = self.request("GET", prefix)
        except ApiError as error:
            if error.status == 404:
                return
            raise
        for entry in document.get("resources", []):
            if "/" not in entry["name"]:
                self._resources[(api_version, entry["kind"])] = Resource(prefix, entry["name"], entry["namespaced"])

    def pdb_version(self) -> str:
        """The PodDisruptionBudget apiVersion this server prefers (see :func:`pdb_api_version`)."""
        return pdb_api_version(self.request("GET", "/apis/policy"))

    def create(self, obj: Json) -> Json:
        resource = self.resource(obj["apiVersion"], obj["kind"])
        return self.request("POST", resource.path(obj["metadata"].get("namespace")), obj)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Json:
        return self.request("GET", self.resource(api_version, kind).path(namespace, name))

    def list(self, api_version: str, kind: str, namespace: str | None = None, **params: Any) -> list[Json]:
        document = self.request("GET", self.resource(api_version, kind).path(namespace), params=params or None)
        return list(document.get("items") or [])

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Json,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> Json:
        """A JSON merge patch (RFC 7386)."""
        path = self.resource(api_version, kind).path(namespace, name, subresource)
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, **options: Any) -> Json:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **options} if options else None
        return self.request("DELETE", self.resource(api_version, kind).path(namespace, name), body)

    def evict(self, namespace: str, name: str) -> Json:
        """POST an Eviction without ``apiVersion``, which every server version accepts (and defaults)."""
        path = self.resource("v1", "Pod").path(namespace, name, "eviction")
        return self.request("POST", path, {"metadata": {"name": name, "namespace": namespace}})


def _warning_text(header: str) -> str:
    """The text of an RFC 7234 ``Warning`` header as Kubernetes sends it: ``299 - "text"``."""
    quoted = header.split(" ", 2)[-1]
    return str(json.loads(quoted)) if quoted.startswith('"') else header


def _decode(status: int, data: bytes) -> Json:
    try:
        document = json.loads(data) if data else {}
    except ValueError:
        document = {}
    if 200 <= status < 300:
        return document if isinstance(document, dict) else {}
    if not isinstance(document, dict):
        document = {}
    message = document.get("message") or data[:200].decode(errors="replace").strip() or "no message"
    raise ApiError(status, str(document.get("reason") or "Unknown"), str(message))
