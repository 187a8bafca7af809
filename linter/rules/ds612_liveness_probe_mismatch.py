"""DS612: a liveness probe that does not reach the descheduler's health endpoint."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner
from desched.tree import mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS612"
NAME = "liveness-probe-mismatch"
SEVERITY = "warning"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"probe", "args"})  # what a remote base's patch must set to be judged
SUMMARY = "Liveness probe over HTTP, or not on the descheduler's --secure-port"
RATIONALE = (
    "The descheduler serves `/healthz` over HTTPS only, on `--secure-port` (10258 by default; upstream "
    "`cmd/descheduler/app/options`). A probe over HTTP, or on another port, always fails: the kubelet restarts "
    "the descheduler in a loop (upstream issue #1750, PR #1751)."
)
REMEDIATION = "Probe httpGet path /healthz, scheme HTTPS, port --secure-port (10258 unless set)."
_PROBE = "livenessProbe:\n  httpGet: {path: /healthz, port: 10258, scheme: HTTPS}\n"
_PORTS = "ports:\n- {name: https, containerPort: 10258}\n"
EXAMPLES = {
    "pass": [
        runner("Deployment", "--descheduling-interval=5m", container=_PROBE),
        runner("Deployment", "--descheduling-interval=5m", container=_PORTS + _PROBE.replace("10258", "https")),
    ],
    "fail": [
        runner("Deployment", "--descheduling-interval=5m", container=_PROBE.replace(", scheme: HTTPS", "")),
        runner("Deployment", "--descheduling-interval=5m", container=_PROBE.replace("10258", "8080")),
        runner("Deployment", "--descheduling-interval=5m", "--secure-port=10443", container=_PROBE),
    ],
}
_DEFAULT_SECURE_PORT = 10258


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        container = run.container_spec
        probe = mapping_or_empty(mapping_or_empty(container.get("livenessProbe")).get("httpGet"))
        if not probe:
            continue
        at = run.where((*run.container, "livenessProbe", "httpGet"))
        scheme = probe.get("scheme", "HTTP")
        if scheme != "HTTPS":
            yield RepoHit(
                *at,
                f"liveness probe over {scheme}: the descheduler serves /healthz over HTTPS only, so the probe fails "
                "and the kubelet restarts it in a loop; set scheme: HTTPS",
                run.label,
            )
        secure = run.flags.get("secure-port")
        wanted = int(secure.value) if secure is not None and secure.value.isdigit() else _DEFAULT_SECURE_PORT
        port = run.port(probe.get("port"))
        if port is not None and port != wanted:
            yield RepoHit(
                *at,
                f"liveness probe on port {port}, but the descheduler serves /healthz on --secure-port {wanted}: the "
                "probe fails and the kubelet restarts it in a loop",
                run.label,
            )
