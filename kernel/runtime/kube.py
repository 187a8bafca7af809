"""Access to a live cluster: the official ``kubernetes`` client loads the configuration, we exchange JSON.

Contract: :class:`KubeClient` connects with a kubeconfig file (``KUBECONFIG`` or ``~/.kube/config`` when no path is
given; ``context`` picks one) or, with ``in_cluster=True``, with the pod's service account. The ``kubernetes`` package
is imported only when a :class:`KubeClient` is created, never on the lint path. :meth:`KubeClient.request` (and
:meth:`KubeClient.get`) returns the decoded JSON of a 2xx answer; everything else (configuration problems, TLS and
connection errors, non-2xx answers) raises :class:`KubeError` with a one-line message and, for HTTP answers, the
status; ``KubeError.sent`` is False only when no connection could be made. Every request is bounded by ``timeout``
seconds per attempt (connecting and each read); the client retries a connection that could not be made and, for
idempotent methods only, a failed read or a 429/503 with ``Retry-After``: at most three attempts per call. The waits
for ``Retry-After`` (seconds or an HTTP date) of one call add up to at most ``timeout`` and, for a client bound by
:meth:`KubeClient.within`, end by its deadline: a server asking for longer is said once per call through ``warn``
(the value asked and the wait used), and when no time is left the answer is final.
:meth:`KubeClient.list` follows pagination and fills in each item's ``apiVersion`` and ``kind``.
:meth:`KubeClient.served` says which resource a group/version serves, from discovery (read once per client), and
:meth:`KubeClient.find` picks a kind's preferred served version. The linter only ever sends GET requests; the executor
also posts evictions and events and keeps its leader-election Lease.
"""

import copy
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

from desched.errors import KubeError
from desched.extras import require
from desched.tree import Json as Json

PAGE_SIZE = 500
ATTEMPTS = 3  # per call, for an idempotent request answered with Retry-After
RETRY_AFTER_STATUSES = (429, 503)
RETRIED_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})  # idempotent (urllib3's, but TRACE)
LOG = logging.getLogger("desched.kube")


class Served(NamedTuple):
    """One resource the server serves: its group/version, plural path segment, kind and whether it is namespaced."""

    api_version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def path(self) -> str:
        """The collection across all namespaces: ``/api/v1/pods``, ``/apis/apps/v1/deployments``."""
        return f"{prefix(self.api_version)}/{quote(self.plural, safe='')}"


def prefix(api_version: str) -> str:
    """``/api/v1`` for the core group, else ``/apis/<group>/<version>``."""
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


class KubeClient:
    """Requests to one API server with the credentials of one kubeconfig context (see the module contract)."""

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        in_cluster: bool = False,
        timeout: float = 30,
        warn: Callable[[str], None] = LOG.warning,
    ) -> None:
        import yaml

        require("executor", "reading a live cluster")
        from kubernetes import config
        from kubernetes.client import Configuration, rest
        from urllib3.util.retry import Retry

        configuration = Configuration()
        try:
            if in_cluster:
                config.load_incluster_config(client_configuration=configuration)
            else:
                config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
        except (config.ConfigException, yaml.YAMLError, OSError, ValueError, TypeError, LookupError) as exc:
            where = "the in-cluster service account" if in_cluster else (kubeconfig or "the default kubeconfig")
            raise KubeError(f"cannot load {where}: {_first_line(exc)}") from None
        self.server = configuration.host.rstrip("/")
        self.context = "in-cluster" if in_cluster else (context or _current_context(kubeconfig))
        # urllib3's default retries a timed-out GET three times (four timeouts per call); never a POST once sent. It
        # would also sleep for any Retry-After, however long: request() waits for it itself, within its bounds.
        configuration.retries = Retry(
            total=2, connect=2, read=1, other=0, raise_on_status=False, respect_retry_after_header=False
        )
        self._configuration = configuration
        self._rest = rest.RESTClientObject(configuration)
        self._timeout = timeout
        self._deadline = math.inf
        self._warn = warn
        self._discovery: dict[str, dict[str, Served]] = {}

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        timeout: float = 30,
        warn: Callable[[str], None] = LOG.warning,
    ) -> "KubeClient":
        """The in-cluster service account when running in a pod and neither ``kubeconfig`` nor ``context`` is given,
        else the kubeconfig (``KUBECONFIG`` or ``~/.kube/config`` without a path)."""
        in_cluster = kubeconfig is None and context is None and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        return cls(kubeconfig, context, in_cluster=in_cluster, timeout=timeout, warn=warn)

    def within(self, deadline: float) -> "KubeClient":
        """This client (its connections and discovery shared) with no wait for ``Retry-After`` past ``deadline``
        (a :func:`time.monotonic` time)."""
        bound = copy.copy(self)
        bound._deadline = deadline
        return bound

    def get(self, path: str, params: dict[str, Any] | None = None) -> Json:
        """The JSON document at ``path`` (see the module contract for errors)."""
        return self.request("GET", path, params)

    def request(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Json:
        """Send ``body`` (JSON, sent as ``content_type``: a patch type for PATCH) with ``method`` to ``path``; the
        decoded 2xx answer, else :class:`KubeError`."""
        url = self.server + path + ("?" + urlencode(params) if params else "")
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        for setting in self._configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        end = min(time.monotonic() + self._timeout, self._deadline)  # of the waits for Retry-After
        warned = False
        for attempt in range(1, ATTEMPTS + 1):
            status, data, asked = self._send(method, path, url, headers, body)
            if asked is None or attempt == ATTEMPTS or method.upper() not in RETRIED_METHODS:
                break
            wait = min(asked, max(0.0, end - time.monotonic()))
            if wait < asked and not warned:
                warned = True
                self._warn(
                    f"{method} {path}: the server answered {status} and asked to retry after {asked:.0f} s; "
                    f"{f'waiting {wait:.1f} s' if wait > 0 else 'not waiting'}: no longer than the request timeout "
                    "and deadline allow"
                )
            if wait <= 0 < asked:
                break
            time.sleep(wait)
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")
        try:
            document = json.loads(text) if text else {}
        except ValueError:
            if 200 <= status < 300:  # a listing cut short reads as no JSON: never as an empty answer
                raise KubeError(f"{method} {path}: the server answered {status}, but not with JSON", status) from None
            document = {}
        if 200 <= status < 300 and isinstance(document, dict):
            return document
        message = document.get("message") if isinstance(document, dict) else None
        definite = _eviction_refused(status, document)
        raise KubeError(f"{method} {path}: {status} {message or text[:200] or 'no answer'}", status, definite=definite)

    def _send(
        self, method: str, path: str, url: str, headers: dict[str, str], body: Any
    ) -> tuple[int, Any, float | None]:
        """One request to ``url`` (``path`` on this server; urllib3 retrying what it may): the status, the body and,
        for a 429 or 503, the seconds its ``Retry-After`` asks for (None without one)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            response = self._rest.request(method, url, headers=headers, body=body, _request_timeout=self._timeout)
            status, answered = int(response.status), response.headers
        except ApiException as error:  # older clients raise for non-2xx answers
            status, data, answered = int(error.status or 0), (error.body or b""), error.headers
        except (HTTPError, OSError) as error:
            raise KubeError(f"cannot reach {self.server}: {_first_line(error)}", sent=_sent(error)) from None
        else:
            try:  # the server answered: a body cut short is its answer's fault, not the network's reach
                data = response.read() if hasattr(response, "read") else response.data
            except (HTTPError, OSError) as error:
                raise KubeError(
                    f"{method} {path}: the server answered {status}, but its answer was cut short: "
                    f"{_first_line(error)}",
                    status,
                    sent=True,
                ) from None
        asked = _retry_after((answered or {}).get("Retry-After")) if status in RETRY_AFTER_STATUSES else None
        return status, data, asked

    def watch(self, path: str, params: dict[str, Any]) -> Iterator[Json]:
        """Watch events (``{"type", "object"}``) of the collection at ``path`` until the server ends the watch (use
        ``timeoutSeconds`` in ``params``); :class:`KubeError` when it cannot start."""
        from urllib3.exceptions import HTTPError

        url = self.server + path + "?" + urlencode({**params, "watch": "true"})
        headers = {"Accept": "application/json"}
        for setting in self._configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        timeout = float(params.get("timeoutSeconds", 300)) + 30
        try:
            response = self._rest.request("GET", url, headers=headers, _request_timeout=(10, timeout))
        except (HTTPError, OSError) as error:
            raise KubeError(f"cannot reach {self.server}: {_first_line(error)}") from None
        if int(response.status) != 200:
            raise KubeError(f"GET {path} (watch): {response.status}", int(response.status))
        raw = response.response
        buffer = b""
        try:
            for chunk in raw.stream(65536, decode_content=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        event = json.loads(line)
                        if isinstance(event, dict):
                            yield event
        except (HTTPError, OSError, ValueError) as error:
            raise KubeError(f"watch of {path} broke: {_first_line(error)}") from None
        finally:
            raw.release_conn()

    def served(self, api_version: str) -> dict[str, Served]:
        """The resources ``api_version`` serves, by kind (empty when the server does not serve that version); read
        from discovery once per client."""
        known = self._discovery.get(api_version)
        if known is not None:
            return known
        try:
            document = self.get(prefix(api_version))
        except KubeError as error:
            if error.status != 404:
                raise
            document = {}
        known = self._discovery[api_version] = {
            entry["kind"]: Served(api_version, entry["name"], entry["kind"], bool(entry.get("namespaced")))
            for entry in document.get("resources", [])
            if "/" not in entry.get("name", "/")
        }
        return known

    def find(self, kind: str, versions: Sequence[str]) -> Served | None:
        """``kind`` (``Pod``), or the resource of that plural name (``pods``), at the first of ``versions`` (in order
        of preference) the server serves; ``None`` if none."""
        for version in versions:
            served = self.served(version)
            resource = served.get(kind) or next((found for found in served.values() if found.plural == kind), None)
            if resource is not None:
                return resource
        return None

    def list(self, resource: Served) -> Iterator[Json]:
        """Every object of ``resource`` in every namespace, page by page, with ``apiVersion`` and ``kind`` set."""
        params: dict[str, Any] = {"limit": PAGE_SIZE}
        while True:
            page = self.get(resource.path, params)
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    yield {"apiVersion": resource.api_version, "kind": resource.kind, **item}
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            params["continue"] = token


def _current_context(kubeconfig: str | None) -> str:
    from kubernetes import config

    try:
        _, active = config.list_kube_config_contexts(config_file=kubeconfig)
    except (config.ConfigException, OSError, ValueError, TypeError, LookupError):
        return "current"
    return str(active.get("name", "current"))


def _sent(error: BaseException) -> bool:
    """Whether a request that got no answer may have reached the server: False only when no connection was made."""
    from urllib3.exceptions import ConnectTimeoutError, MaxRetryError

    reason = error.reason if isinstance(error, MaxRetryError) else error
    return not isinstance(reason, ConnectTimeoutError)  # NewConnectionError (refused, DNS) is a ConnectTimeoutError


def _retry_after(value: str | None) -> float | None:
    """The seconds a ``Retry-After`` header asks for (delay seconds or an HTTP date, at least 0); None when absent
    or unreadable."""
    text = (value or "").strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def _eviction_refused(status: int, document: Any) -> bool:
    """Whether a 500 is the Eviction API's own answer for a pod under several PodDisruptionBudgets: a ``Status`` it
    builds itself, with no ``reason`` (kubernetes ``pkg/registry/core/pod/storage/eviction.go``), unlike the
    ``InternalError`` of a failing server or a proxy's page: nothing was deleted."""
    return (
        status == 500
        and isinstance(document, dict)
        and document.get("kind") == "Status"
        and not document.get("reason")
        and "PodDisruptionBudget" in str(document.get("message") or "")
    )
