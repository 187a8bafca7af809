"""What the descheduler chart deploys from a user's values, per chart version: its CronJob or Deployment with the
descheduler's command line, liveness probe, priority class and service account, and its ClusterRole and binding
(docs/helm-chart.md#8-the-descheduler-the-chart-deploys). The deployment rules (DS6xx) judge it as they judge a
workload written by hand, and each finding lands on the value that made the rendered field (:class:`ChartRun`).

Every table was read off ``templates/cronjob.yaml``, ``templates/deployment.yaml``, ``templates/clusterrole.yaml``,
``templates/_helpers.tpl`` and ``values.yaml`` at each ``descheduler-helm-chart-<version>`` tag of
kubernetes-sigs/descheduler. Only what the deployment rules read is rendered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.chart.values import coalesce
from desched.chart.versions import ChartRelease, since
from desched.gitops.documents import CHART_VALUES
from desched.tree import Path, list_or_empty, mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.chartrender import ChartDoc
    from desched.deployment.runs import DeschedulerRun

__all__ = ["ChartRun", "chart_documents", "chart_run"]

#: How the templates write ``cmdOptions`` (``range $key, $value``, keys sorted): ``words`` ``"--key"`` then the value
#: as its own word when it is truthy (to 0.27.1); ``truthy`` ``--key=value`` when truthy, else a bare ``--key`` (so
#: ``dry-run: false`` renders ``--dry-run``, 0.28.0 to 0.30.2); ``string`` a bare ``--key`` for a null, else
#: ``--key=<toString value>`` (from 0.31.0).
_ARGS = (("0.19.0", "words"), ("0.28.0", "truthy"), ("0.31.0", "string"))
#: ``templates/deployment.yaml`` exists (``kind: Deployment`` renders); before 0.22.0 the chart has only the CronJob.
_DEPLOYMENT = (("0.19.0", False), ("0.22.0", True))
#: ``descheduler.leaderElection`` in the Deployment: ``None`` (none), ``words`` (``--leader-elect`` then the value
#: as a word, which pflag never reads: election is on whatever ``enabled`` says, 0.24.0), ``equals``
#: (``--leader-elect=<enabled>``); included whenever ``leaderElection`` is a non-empty map, and from 0.33.0 only
#: when ``leaderElection.enabled``.
_LEADER = (("0.19.0", None), ("0.24.0", "words"), ("0.24.1", "equals"))
_LEADER_ONLY_ENABLED = (("0.19.0", False), ("0.33.0", True))
#: The values key of ``--leader-elect-resource-namespace``: the misspelt one alone until 0.31.0, then either.
_RESOURCE_NAMESPACE = (("0.19.0", ("resourceNamescape",)), ("0.31.0", ("resourceNamescape", "resourceNamespace")))
#: ``replicas`` renders (and above 1 the chart fails without ``leaderElection.enabled``) from 0.24.0; 1 before.
_REPLICAS = (("0.19.0", False), ("0.24.0", True))
#: ``activeDeadlineSeconds`` of the CronJob's job from 0.34.0.
_ACTIVE_DEADLINE = (("0.19.0", False), ("0.34.0", True))

_READ = ("get", "watch", "list")
_Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # (apiGroups, resources, verbs)
_ALWAYS: tuple[_Rule, ...] = (
    (("",), ("nodes",), _READ),
    (("",), ("pods",), (*_READ, "delete")),
    (("",), ("pods/eviction",), ("create",)),
    (("scheduling.k8s.io",), ("priorityclasses",), _READ),
)
_NAMESPACES: _Rule = (("",), ("namespaces",), _READ)
_PDBS: _Rule = (("policy",), ("poddisruptionbudgets",), _READ)
#: The ClusterRole's unconditional rules, per chart version (events and PodSecurityPolicy rules left out: no
#: requirement reads them).
_RULES: tuple[tuple[str, tuple[_Rule, ...]], ...] = (
    ("0.19.0", _ALWAYS),
    ("0.20.0", (*_ALWAYS, (("",), ("namespaces",), ("get", "list")))),
    ("0.23.1", (*_ALWAYS, _NAMESPACES)),
    ("0.32.2", (*_ALWAYS, _NAMESPACES, _PDBS)),
    ("0.35.1", (*_ALWAYS, _NAMESPACES, _PDBS, (("",), ("persistentvolumeclaims",), _READ))),
)
#: What grants ``metrics.k8s.io`` nodes and pods: nothing, ``collector`` (``deschedulerPolicy.metricsCollector
#: .enabled``, 0.32.2) or ``providers`` (a ``metricsProviders`` entry of ``source: KubernetesMetrics``, 0.33.0 on).
_METRICS = (("0.19.0", None), ("0.32.2", "collector"), ("0.33.0", "providers"))
#: The Lease rules with ``leaderElection.enabled`` (0.24.0 on): create (and update from 0.24.1) on any Lease;
#: get, patch and delete on the one named ``resourceName`` (always ``descheduler`` in 0.24.x).
_LEASES = (("0.19.0", None), ("0.24.0", ("create",)), ("0.24.1", ("create", "update")))
_LEASE_NAME_VALUE = (("0.19.0", False), ("0.25.0", True))

_PROBE = {
    "failureThreshold": 3,
    "httpGet": {"path": "/healthz", "port": 10258, "scheme": "HTTPS"},
    "initialDelaySeconds": 3,
    "periodSeconds": 10,
}
_COMMON = {
    "cmdOptions": {"v": 3},
    "priorityClassName": "system-cluster-critical",
    "rbac": {"create": True},
    "serviceAccount": {"create": True, "name": None},
    "schedule": "*/2 * * * *",
}
_KIND = {**_COMMON, "kind": "CronJob", "deschedulingInterval": "5m"}
_ELECTION = {**_KIND, "livenessProbe": _PROBE, "leaderElection": {}, "replicas": 1}
#: ``values.yaml`` defaults of the keys rendered here, per chart version.
_DEFAULTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("0.19.0", _COMMON),
    ("0.22.0", _KIND),
    ("0.23.0", {**_KIND, "livenessProbe": _PROBE}),
    ("0.24.0", _ELECTION),
    (
        "0.34.0",
        {**_ELECTION, "livenessProbe": {**_PROBE, "initialDelaySeconds": 5, "periodSeconds": 20, "timeoutSeconds": 5}},
    ),
)
_PORTS = [{"containerPort": 10258, "protocol": "TCP"}]  # values ``ports`` from 0.32.0; this, written, before
_POLICY_FILE = "/policy-dir/policy.yaml"


class ChartRun(NamedTuple):
    """The documents the chart renders for one install: its workload (none when ``kind`` names neither), its RBAC
    objects, and ``origins``: each path of the workload mapped to the values path that renders it (``()``: the
    chart's template itself). :meth:`values_path` reads the map."""

    workload: dict[str, Any] | None
    rbac: list[dict[str, Any]]
    origins: dict[Path, Path]

    def values_path(self, path: Path) -> Path:
        """The values path behind the workload's ``path``: that of its nearest mapped ancestor, followed by the
        rest of ``path`` when the ancestor copies a values subtree whole (``livenessProbe``)."""
        for end in range(len(path), -1, -1):
            found = self.origins.get(path[:end])
            if found is not None:
                return (*found, *path[end:]) if found and found[0] in _COPIED else found
        return ()


_COPIED = frozenset({"livenessProbe"})


def chart_documents(values: Mapping[str, Any], chart: ChartRelease, policy: Mapping[str, Any]) -> ChartRun:
    """What ``chart`` renders from the user's merged ``values`` (the chart's defaults coalesced under them) around
    the rendered ``policy`` (``deschedulerPolicy``, which decides the metrics rule)."""
    merged = coalesce(values, since(_DEFAULTS, chart.version)).values
    fullname = _fullname(merged)
    account = _account(merged, fullname)
    workload: dict[str, Any] | None = None
    origins: dict[Path, Path] = {}
    kind = merged.get("kind", "CronJob")
    if kind == "Deployment" and since(_DEPLOYMENT, chart.version):
        workload = _deployment(merged, chart, fullname, account, origins)
    elif kind == "CronJob" or not since(_DEPLOYMENT, chart.version):
        workload = _cronjob(merged, chart, fullname, account, origins)
    creates_rbac = _truthy(mapping_or_empty(merged.get("rbac")).get("create"))
    rbac = _rbac(merged, chart, policy, fullname, account) if creates_rbac else []
    return ChartRun(workload, rbac, origins)


def chart_run(doc: ChartDoc, policy: Mapping[str, Any] | None) -> DeschedulerRun | None:
    """The descheduler the chart of ``doc`` (a rendered source of chart values, the install's primary one) runs,
    reading the v1alpha2 ``policy``, with the chart's RBAC objects and findings placed on the values behind each
    rendered field; ``None`` when the chart renders no workload."""
    from desched.deployment.runs import descheduler_runs

    rendered = chart_documents(doc.values, doc.chart, doc.root)
    run = next(descheduler_runs([(doc.file, rendered.workload)]), None) if rendered.workload else None
    if run is None:
        return None

    def where(path: Path) -> tuple[str, int, int]:
        return _written_at(doc, rendered.values_path(path))

    how = "assumed: no chart version is pinned" if doc.assumed else doc.pinned
    title = f"the {run.kind} of chart {doc.chart.version}, {how}"

    def naming(path: Path) -> str | None:
        return ".".join(str(part) for part in rendered.values_path(path)) or None

    rbac = tuple((doc.file, obj) for obj in rendered.rbac)
    return run._replace(locator=where, title=title, policy=policy, naming=naming, rbac=rbac)


def _written_at(doc: ChartDoc, path: Path) -> tuple[str, int, int]:
    """Where the value at values ``path`` (or its nearest ancestor) is written: in the last source of the install
    that sets it, else at the chart pin (a chart default, or the template itself)."""
    for end in range(len(path), 0, -1):
        layer = doc.values_writer(path[:end])
        if layer is not None:
            return (layer.file, *layer.position((CHART_VALUES, *path[:end]), key=True))
    if doc.pin is not None:
        return (doc.file, *doc.pin)
    return (doc.file, *doc.source.position((CHART_VALUES,)))


def _fullname(values: Mapping[str, Any]) -> str:
    # descheduler.fullname: fullnameOverride, else the release name when it contains the chart's name; desched does
    # not know the release name, so it takes one that does
    override = values.get("fullnameOverride")
    return override if isinstance(override, str) and override else "descheduler"


def _account(values: Mapping[str, Any], fullname: str) -> str:
    # descheduler.serviceAccountName: serviceAccount.name, else the fullname when the chart creates the account,
    # else "default"
    account = mapping_or_empty(values.get("serviceAccount"))
    name = account.get("name")
    if isinstance(name, str) and name:
        return name
    return fullname if _truthy(account.get("create")) else "default"


def _deployment(
    values: Mapping[str, Any], chart: ChartRelease, fullname: str, account: str, origins: dict[Path, Path]
) -> dict[str, Any]:
    replicas = values.get("replicas") if since(_REPLICAS, chart.version) else 1
    pod_path: Path = ("spec", "template", "spec")
    origins[("spec", "replicas")] = ("replicas",)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": fullname},
        "spec": {
            "replicas": replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1,
            "template": {"spec": _pod(values, chart, (fullname, account), pod_path, origins, deployment=True)},
        },
    }


def _cronjob(
    values: Mapping[str, Any], chart: ChartRelease, fullname: str, account: str, origins: dict[Path, Path]
) -> dict[str, Any]:
    job: dict[str, Any] = {}
    deadline = values.get("activeDeadlineSeconds")
    if since(_ACTIVE_DEADLINE, chart.version):
        origins[("spec", "jobTemplate", "spec", "activeDeadlineSeconds")] = ("activeDeadlineSeconds",)
        if _truthy(deadline):
            job["activeDeadlineSeconds"] = deadline
    origins[("spec", "schedule")] = ("schedule",)
    pod_path: Path = ("spec", "jobTemplate", "spec", "template", "spec")
    job["template"] = {"spec": _pod(values, chart, (fullname, account), pod_path, origins, deployment=False)}
    spec = {"schedule": values.get("schedule"), "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": job}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": fullname}, "spec": spec}


def _pod(
    values: Mapping[str, Any],
    chart: ChartRelease,
    names: tuple[str, str],
    pod_path: Path,
    origins: dict[Path, Path],
    *,
    deployment: bool,
) -> dict[str, Any]:
    """The pod spec, ``names`` being the chart's fullname (its ConfigMap's) and the service account."""
    fullname, account = names
    container_path: Path = (*pod_path, "containers", 0)
    words = list(_args(values, chart, deployment=deployment))
    for index, (_, origin) in enumerate(words):
        origins[(*container_path, "args", index)] = origin
    image = mapping_or_empty(values.get("image"))
    tag = image.get("tag") or f"v{chart.app_version}"
    container: dict[str, Any] = {
        "name": "descheduler",
        "image": f"{image.get('repository') or 'registry.k8s.io/descheduler/descheduler'}:{tag}",
        "command": ["/bin/descheduler"],
        "args": [word for word, _ in words],
        "ports": values.get("ports") if isinstance(values.get("ports"), list) else _PORTS,
        "volumeMounts": [{"mountPath": "/policy-dir", "name": "policy-volume"}],
    }
    probe = values.get("livenessProbe")
    if isinstance(probe, Mapping) and probe:
        container["livenessProbe"] = probe
    pod: dict[str, Any] = {
        "serviceAccountName": account,
        "containers": [container],
        "volumes": [{"name": "policy-volume", "configMap": {"name": fullname}}],
    }
    if _truthy(values.get("priorityClassName")):
        pod["priorityClassName"] = values["priorityClassName"]
    origins.update({
        (*pod_path, "priorityClassName"): ("priorityClassName",),
        (*pod_path, "serviceAccountName"): ("serviceAccount", "name"),
        (*container_path, "image"): ("image", "tag"),
        (*container_path, "livenessProbe"): ("livenessProbe",),
        (*container_path, "ports"): ("ports",),
    })  # fmt: skip
    return pod


def _args(values: Mapping[str, Any], chart: ChartRelease, *, deployment: bool) -> Iterator[tuple[str, Path]]:
    """The container's arguments as the chart's template writes them, each with the values path behind it."""
    style = since(_ARGS, chart.version)
    yield from _flag("policy-config-file", _POLICY_FILE, (), words=style == "words")
    if deployment:
        interval = values.get("deschedulingInterval")
        if interval is not None and interval != "":  # else the chart's `required` refuses to render
            yield from _flag("descheduling-interval", _go_text(interval), ("deschedulingInterval",),
                             words=style == "words")  # fmt: skip
    options = mapping_or_empty(values.get("cmdOptions"))
    for key in sorted(options):
        value, origin = options[key], ("cmdOptions", key)
        if style == "string":
            yield (f"--{key}" if value is None else f"--{key}={_go_text(value)}"), origin
        elif style == "truthy":
            yield (f"--{key}={_go_text(value)}" if _truthy(value) else f"--{key}"), origin
        else:
            yield f"--{key}", origin
            if _truthy(value):
                yield _go_text(value), origin
    if deployment:
        yield from _leader_election(values, chart)


def _leader_election(values: Mapping[str, Any], chart: ChartRelease) -> Iterator[tuple[str, Path]]:
    style = since(_LEADER, chart.version)
    election = values.get("leaderElection")
    if style is None or not isinstance(election, Mapping) or not election:
        return
    enabled = election.get("enabled")
    if since(_LEADER_ONLY_ENABLED, chart.version) and not _truthy(enabled):
        return
    words = style == "words"
    shown = _go_text(enabled if enabled is not None else False) if words else _go_text(enabled)
    yield from _flag("leader-elect", shown, ("leaderElection", "enabled"), words=words)
    keys: list[tuple[str, str]] = [
        ("leaseDuration", "lease-duration"), ("renewDeadline", "renew-deadline"), ("retryPeriod", "retry-period"),
        ("resourceLock", "resource-lock"), ("resourceName", "resource-name"),
    ]  # fmt: skip
    keys += [(key, "resource-namespace") for key in since(_RESOURCE_NAMESPACE, chart.version)]
    written: set[str] = set()
    for key, flag in keys:
        value = election.get(key)
        if _truthy(value) and flag not in written:
            written.add(flag)
            yield from _flag(f"leader-elect-{flag}", _go_text(value), ("leaderElection", key), words=words)


def _flag(name: str, value: str, origin: Path, *, words: bool) -> Iterator[tuple[str, Path]]:
    if words:
        yield f"--{name}", origin
        yield value, origin
    else:
        yield f"--{name}={value}", origin


def _rbac(
    values: Mapping[str, Any], chart: ChartRelease, policy: Mapping[str, Any], fullname: str, account: str
) -> list[dict[str, Any]]:
    rules = [_rule(*rule) for rule in since(_RULES, chart.version)]
    election = mapping_or_empty(values.get("leaderElection"))
    lease_verbs = since(_LEASES, chart.version)
    if lease_verbs is not None and _truthy(election.get("enabled")):
        name = election.get("resourceName") if since(_LEASE_NAME_VALUE, chart.version) else None
        rules.append(_rule(("coordination.k8s.io",), ("leases",), lease_verbs))
        rules.append({**_rule(("coordination.k8s.io",), ("leases",), ("get", "patch", "delete")),
                      "resourceNames": [name if isinstance(name, str) and name else "descheduler"]})  # fmt: skip
    if _metrics_granted(since(_METRICS, chart.version), policy):
        rules.append(_rule(("metrics.k8s.io",), ("pods", "nodes"), ("get", "list")))
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": fullname}}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": fullname},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": fullname},
        "subjects": [{"kind": "ServiceAccount", "name": account}],
    }
    return [{**role, "rules": rules}, binding]


def _metrics_granted(source: str | None, policy: Mapping[str, Any]) -> bool:
    if source == "collector":
        return _truthy(mapping_or_empty(policy.get("metricsCollector")).get("enabled"))
    providers = policy.get("metricsProviders")
    return source == "providers" and any(
        mapping_or_empty(provider).get("source") == "KubernetesMetrics" for provider in list_or_empty(providers)
    )


def _rule(groups: tuple[str, ...], resources: tuple[str, ...], verbs: tuple[str, ...]) -> dict[str, Any]:
    return {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}


def _truthy(value: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings, maps and lists are false."""
    return (
        value is not None
        and value is not False
        and value != 0
        and not (isinstance(value, (str, Mapping, list)) and not value)
    )


def _go_text(value: Any) -> str:
    """A value as a Go template prints it: Helm reads YAML numbers as float64 (``3``, not ``3.0``), booleans as
    ``true``/``false``, a missing value as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
