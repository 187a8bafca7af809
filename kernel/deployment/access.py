"""What the descheduler needs from the Kubernetes API (its RBAC), per release: the one declaration DS609, ``desched
run``'s listing and the test of ``deploy/``'s RBAC read.

Upstream's binary needs what its core sends whatever the policy (:data:`CORE`, policy-level fields included) plus
what each plugin its profiles run declares beside it (:attr:`desched.plugins.base.Plugin.needs`, the DefaultEvictor's
options included); ``desched run`` needs what it declares here (:data:`DESCHED_RUN`). :func:`needs` picks those that
apply to a :class:`~desched.plugins.base.Setting`, :func:`permissions` spells them as RBAC permissions, and
:func:`required` gives what DS609 checks of a deployed descheduler: the fatal ones (docs/deployment-rules.md#rbac).

An informer started before the factory's ``Start`` lists and watches its resource; one registered after it never
starts and sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from desched.deployment.rbac import Permission
from desched.plugins import REGISTRY, Plugin
from desched.plugins.base import Need, Setting, When
from desched.policy.model import decode
from desched.tree import list_or_empty, mapping_or_empty
from desched.versions import NEWEST

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

__all__ = ["CORE", "DESCHED_RUN", "needs", "permissions", "required", "setting"]

LIST_WATCH = ("list", "watch")
EVICTING = When("without --dry-run", lambda setting, args: not setting.dry_run)
DRY_RUN = When("with --dry-run", lambda setting, args: setting.dry_run)
ELECTING = When(
    "with --leader-elect, without --dry-run", lambda setting, args: setting.leader_elect and not setting.dry_run
)


def _locking(kind: str) -> When:
    """Leader election on a ``--leader-elect-resource-lock`` of ``kind`` (a lock on that kind and on a Lease)."""
    return When(
        f"with --leader-elect --leader-elect-resource-lock={kind}, without --dry-run",
        lambda setting, args: ELECTING.holds(setting, args) and setting.flags.get("leader-elect-resource-lock") == kind,
    )


def _lock(setting: Setting) -> tuple[str | None, str | None]:
    """The lock object: ``--leader-elect-resource-name`` in ``--leader-elect-resource-namespace`` (upstream's
    defaults ``descheduler`` and ``kube-system``, the pod's namespace for a reference desched could not expand)."""
    namespace = setting.flags.get("leader-elect-resource-namespace") or "kube-system"
    name = setting.flags.get("leader-elect-resource-name") or "descheduler"
    return (setting.namespace if "$(" in namespace else namespace), name


def _providers(setting: Setting) -> list[Mapping[str, Any]]:
    return [mapping_or_empty(provider) for provider in list_or_empty(setting.policy.get("metricsProviders"))]


def _collecting(setting: Setting, args: Any) -> bool:
    """The policy starts the metrics collector: ``metricsCollector.enabled`` or a KubernetesMetrics provider."""
    enabled = mapping_or_empty(setting.policy.get("metricsCollector")).get("enabled") is True
    return enabled or any(provider.get("source") == "KubernetesMetrics" for provider in _providers(setting))


def _token_namespace(setting: Setting) -> str | None:
    """The namespace of the Prometheus provider's ``authToken`` Secret (the last Prometheus provider counts, as
    upstream maps providers by source), ``None`` without one."""
    found = [provider for provider in _providers(setting) if provider.get("source") == "Prometheus"]
    prometheus = mapping_or_empty(found[-1].get("prometheus")) if found else {}
    secret = mapping_or_empty(mapping_or_empty(prometheus.get("authToken")).get("secretReference"))
    namespace = secret.get("namespace")
    return namespace if prometheus.get("url") and isinstance(namespace, str) and namespace else None


def _token_secrets(setting: Setting) -> tuple[str | None, str | None]:
    return _token_namespace(setting), None


_DESCHEDULER = "pkg/descheduler/descheduler.go"
_SANDBOX = "v0.35.0 pkg/descheduler/kubeclientsandbox.go:98-106,121-127; descheduler.go:420-422"
_LOCKS = "v0.27.1 vendor/k8s.io/client-go/tools/leaderelection/resourcelock/interface.go:191-207"

#: What upstream's descheduler sends whatever its plugins: its informers, evictions, Events, leader election and
#: the policy-level metrics settings.
CORE: tuple[Need, ...] = (
    Need("", "nodes", ("list",), 0, 25, f"v0.25.1 {_DESCHEDULER}:225,242; pkg/descheduler/node/node.go:44,51"),
    Need("", "nodes", LIST_WATCH, 26, None, f"v0.26.1 {_DESCHEDULER}:235,247; v0.36.0 :100,186,448"),
    Need("", "pods", ("list",), 0, 22, "v0.22.1 pkg/descheduler/pod/pods.go:112,144"),
    Need("", "pods", LIST_WATCH, 23, None, f"v0.23.1 {_DESCHEDULER}:167,172; v0.36.0 :125,448"),
    Need("", "namespaces", LIST_WATCH, 23, 34,
         f"v0.23.1 {_DESCHEDULER}:164,172; v0.27.0 :212,223; v0.30.1 :89,415-416; v0.32.0 :137,446; v0.34.0 :164,627"),
    Need("scheduling.k8s.io", "priorityclasses", LIST_WATCH, 23, 34,
         f"v0.23.1 {_DESCHEDULER}:165,172; v0.27.0 :213,223; v0.30.1 :90,415-416; v0.32.0 :138,446; v0.34.0 :165,627"),
    Need("policy", "poddisruptionbudgets", LIST_WATCH, 32, 34, f"v0.32.0 {_DESCHEDULER}:139,446; v0.34.0 :166,627"),
    Need("", "persistentvolumeclaims", LIST_WATCH, 35, None, f"v0.35.0 {_DESCHEDULER}:126-128"),
    Need("", "namespaces", LIST_WATCH, 35, None, _SANDBOX, DRY_RUN),
    Need("scheduling.k8s.io", "priorityclasses", LIST_WATCH, 35, None, _SANDBOX, DRY_RUN),
    Need("policy", "poddisruptionbudgets", LIST_WATCH, 35, None, _SANDBOX, DRY_RUN),
    Need("", "pods/eviction", ("create",), 0, None,
         "v0.20.0 pkg/descheduler/evictions/evictions.go:128-144; v0.36.0 :623", EVICTING),
    Need("", "events", ("create", "patch"), 0, 24, "v0.24.1 pkg/descheduler/evictions/evictions.go:160-167",
         EVICTING, fatal=False),
    Need("events.k8s.io", "events", ("create", "patch"), 25, None, f"v0.25.1 {_DESCHEDULER}:289-296; v0.36.0 :515-520",
         EVICTING, fatal=False),
    Need("coordination.k8s.io", "leases", ("create", "get", "update"), 24, None,
         f"v0.24.1 {_DESCHEDULER}:80, pkg/descheduler/leaderelection.go:58-72; v0.36.0 vendor/k8s.io/client-go/tools/"
         "leaderelection/resourcelock/leaselock.go:43,68,89", ELECTING, _lock),
    Need("", "endpoints", ("create", "get", "update"), 24, 27, _LOCKS, _locking("endpointsleases"), _lock),
    Need("", "configmaps", ("create", "get", "update"), 24, 27, _LOCKS, _locking("configmapsleases"), _lock),
    Need("metrics.k8s.io", "nodes", ("get",), 32, None,
         f"v0.32.0 {_DESCHEDULER}:334-335, pkg/descheduler/metricscollector/metricscollector.go:126; "
         "v0.33.0 descheduler.go:490-491",
         When("metricsCollector.enabled or a KubernetesMetrics metrics provider", _collecting)),
    Need("", "secrets", LIST_WATCH, 33, None,
         f"v0.33.0 {_DESCHEDULER}:230-231,602-611; v0.36.0 pkg/descheduler/prom_client_controller.go:104-105",
         When("a Prometheus metrics provider with url and authToken.secretReference",
              lambda setting, args: _token_namespace(setting) is not None), _token_secrets),
)  # fmt: skip

#: What ``desched run`` sends, whatever its release and policy: it lists these kinds before each cycle, in this order
#: (executor/live.py), evicts and records Events (executor/live.py ``Evictions``) and keeps its Lease
#: (executor/leaderelection.py).
DESCHED_RUN: tuple[Need, ...] = (
    *(Need(group, resource, ("list",), 0, None, "executor/live.py list_cluster")
      for group, resource in (("", "nodes"), ("", "namespaces"), ("scheduling.k8s.io", "priorityclasses"),
                              ("", "persistentvolumeclaims"), ("policy", "poddisruptionbudgets"), ("", "pods"))),
    Need("", "pods/eviction", ("create",), 0, None, "executor/live.py Evictions.evict", EVICTING),
    Need("events.k8s.io", "events", ("create",), 0, None, "executor/live.py Evictions._event", EVICTING, fatal=False),
    Need("coordination.k8s.io", "leases", ("create", "get", "update"), 0, None,
         "executor/leaderelection.py LeaderElector", ELECTING, _lock),
)  # fmt: skip


def needs(setting: Setting, program: str = "descheduler") -> list[Need]:
    """The needs that apply to ``program`` (``descheduler``: upstream's binary, ``desched``: ``desched run``) in
    ``setting``: ``desched run``'s own; for upstream's, the core's, then those of each plugin every profile of the
    policy runs (its DefaultEvictor always) with that profile's args."""
    if program == "desched":
        return [need for need in DESCHED_RUN if need.applies(setting)]
    found = [need for need in CORE if need.applies(setting)]
    for plugin, args in _plugins(setting.policy):
        found += [need for need in plugin.needs if need.applies(setting, args)]
    return found


def _plugins(policy: Mapping[str, Any]) -> Iterator[tuple[Plugin, Any]]:
    """Every registered plugin each profile of the v1alpha2 ``policy`` runs (the DefaultEvictor always, as upstream
    adds it) with its typed args after upstream's defaults: its first ``pluginConfig`` entry's, else ``{}``'s."""
    for profile in decode(policy).profiles:
        names = dict.fromkeys(("DefaultEvictor", *(ref.name for ref in profile.enabled() if ref.registered)))
        for name in names:
            plugin, config = REGISTRY[name], profile.config(name)
            yield plugin, plugin.defaults(config.args if config is not None else plugin.decode({}))


def permissions(setting: Setting, found: list[Need]) -> list[Permission]:
    """The permissions ``found`` needs ask in ``setting``, in order and once each; a ``create`` names no object (RBAC
    cannot restrict a create by name)."""
    listed: dict[Permission, None] = {}
    for need in found:
        namespace, name = need.where(setting)
        for verb in need.verbs:
            listed[Permission(need.group, need.resource, verb, namespace, None if verb == "create" else name)] = None
    return list(listed)


def setting(run: DeschedulerRun) -> Setting:
    """The setting of a deployed descheduler: its release (its image's or ``--target-version``'s, the newest when
    they name none, as the release inference assumes), flags, namespace and the policy the repository shows."""
    flags = {name: flag.value for name, flag in run.flags.items() if flag.value}
    release = run.release_minor
    return Setting(
        NEWEST if release is None else release,
        run.enabled("dry-run"),
        run.enabled("leader-elect"),
        flags,
        run.namespace,
        run.policy if run.policy is not None else {},
    )


def required(run: DeschedulerRun) -> list[Permission]:
    """What DS609 checks ``run``'s service account for: the permissions of its fatal needs."""
    found = setting(run)
    return permissions(found, [need for need in needs(found, run.program) if need.fatal])
