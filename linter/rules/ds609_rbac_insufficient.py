"""DS609: the descheduler's service account lacks a permission the descheduler needs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import CLUSTER_RBAC, runner
from desched.tree import list_or_empty, mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.rbac import Permission
    from desched.deployment.repository import Runs
    from desched.deployment.runs import DeschedulerRun

ID = "DS609"
NAME = "rbac-insufficient"
SEVERITY = "error"
SEVERITY_NOTE = "info when the files hold no RBAC for the account (nothing to check)"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "Descheduler service account without a permission the descheduler needs"
RATIONALE = (
    "The descheduler lists nodes and pods cluster-wide and evicts through `pods/eviction`; from v0.35 it also "
    "watches persistentvolumeclaims at start-up (upstream #1839, PR #1836); with `--leader-elect` it needs Leases "
    "in `--leader-elect-resource-namespace` (kube-system unless set, not its own namespace; PR #722). A missing "
    "grant fails every run or leaves it without a leader. A RoleBinding grants only in its namespace, so "
    "cluster-scoped nodes need a ClusterRoleBinding (#251, #377)."
)
REMEDIATION = "Grant the missing permissions to the descheduler's service account (the message lists them)."
_METRICS_POLICY = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: descheduler-policy, namespace: kube-system}
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    metricsProviders:
    - source: KubernetesMetrics
    profiles:
    - name: usage
      pluginConfig:
      - name: LowNodeUtilization
        args:
          thresholds: {cpu: 20}
          targetThresholds: {cpu: 50}
          metricsUtilization: {source: KubernetesMetrics}
      plugins:
        balance: {enabled: [LowNodeUtilization]}
"""
_METRICS_RULE = """- apiGroups: [metrics.k8s.io]
  resources: [nodes, pods]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding"""
EXAMPLES = {
    "pass": [
        runner("CronJob") + CLUSTER_RBAC,
        runner("CronJob")
        + CLUSTER_RBAC.replace("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding", _METRICS_RULE)
        + _METRICS_POLICY,
    ],
    "fail": [
        runner("CronJob") + CLUSTER_RBAC + _METRICS_POLICY,
        runner("CronJob") + CLUSTER_RBAC.replace(", persistentvolumeclaims", ""),
        runner("CronJob")
        + CLUSTER_RBAC.replace("kind: ClusterRoleBinding", "kind: RoleBinding").replace(
            "metadata: {name: descheduler}\nroleRef", "metadata: {name: descheduler, namespace: kube-system}\nroleRef"
        ),
    ],
}
_READ = ("get", "list", "watch")
#: (group, resource) of what ``desched run`` lists before each cycle (``KINDS`` of executor/live.py).
DESCHED_RUN_LISTS = (
    ("", "nodes"), ("", "namespaces"), ("scheduling.k8s.io", "priorityclasses"), ("", "persistentvolumeclaims"),
    ("policy", "poddisruptionbudgets"), ("", "pods"),
)  # fmt: skip
_GET = ("get", "list")


def required(run: DeschedulerRun) -> list[Permission]:
    """The permissions the descheduler of ``run`` needs, from its flags, image release and policy
    (docs/deployment-rules.md); for ``desched run``, what it lists before each cycle."""
    from desched.deployment.rbac import Permission  # only runs with a descheduler workload and its RBAC pay for it

    needed = []
    if not run.enabled("dry-run"):
        needed.append(Permission("", "pods/eviction", "create"))
    if run.program == "desched":  # it lists all it reads, and reads nothing the policy adds
        needed += [Permission(group, resource, "list") for group, resource in DESCHED_RUN_LISTS]
    else:
        needed += [Permission("", resource, verb) for resource in ("nodes", "pods") for verb in _READ]
        release = run.release_minor
        if release is not None and release >= 35:
            needed += [Permission("", "persistentvolumeclaims", verb) for verb in _READ]
        needed += _policy_needs(run.policy) if run.policy is not None else []
    if run.enabled("leader-elect"):
        namespace = _value(run, "leader-elect-resource-namespace") or "kube-system"
        # a reference the kubelet expands from the pod (its own namespace, as in deploy/executor) that desched could
        # not: the pod's namespace
        shown = run.namespace if "$(" in namespace else namespace
        name = _value(run, "leader-elect-resource-name") or "descheduler"
        needed.append(Permission("coordination.k8s.io", "leases", "create", shown))
        needed += [Permission("coordination.k8s.io", "leases", verb, shown, name) for verb in ("get", "update")]
    return needed


def _policy_needs(policy: Mapping[str, Any]) -> list[Permission]:
    """What the v1alpha2 ``policy`` adds (upstream v0.36.0 ``pkg/framework/plugins/defaultevictor/defaultevictor.go``,
    ``pkg/descheduler/descheduler.go``): PDB reads for the PodsWithoutPDB protection, ``get`` priorityclasses for a
    ``priorityThreshold.name``, namespace reads for a ``namespaceLabelSelector``, metrics.k8s.io for the metrics
    collector or a KubernetesMetrics provider, and the Prometheus token's Secret in its namespace."""
    from desched.deployment.rbac import Permission

    needed: list[Permission] = []
    for args in _evictor_args(policy):
        protections = mapping_or_empty(args.get("podProtections")).get("extraEnabled")
        if args.get("ignorePodsWithoutPDB") is True or "PodsWithoutPDB" in list_or_empty(protections):
            needed += [Permission("policy", "poddisruptionbudgets", verb) for verb in _READ]
        if mapping_or_empty(args.get("priorityThreshold")).get("name"):
            needed.append(Permission("scheduling.k8s.io", "priorityclasses", "get"))
        selector = mapping_or_empty(args.get("namespaceLabelSelector"))
        if selector.get("matchLabels") or selector.get("matchExpressions"):
            needed += [Permission("", "namespaces", verb) for verb in _READ]
    providers = [mapping_or_empty(provider) for provider in list_or_empty(policy.get("metricsProviders"))]
    collector = mapping_or_empty(policy.get("metricsCollector")).get("enabled") is True
    if collector or any(provider.get("source") == "KubernetesMetrics" for provider in providers):
        needed += [Permission("metrics.k8s.io", resource, verb) for resource in ("nodes", "pods") for verb in _GET]
    for provider in providers:
        prometheus = mapping_or_empty(provider.get("prometheus"))
        secret = mapping_or_empty(mapping_or_empty(prometheus.get("authToken")).get("secretReference"))
        namespace = secret.get("namespace")
        if provider.get("source") == "Prometheus" and isinstance(namespace, str) and namespace:
            needed += [Permission("", "secrets", verb, namespace) for verb in _READ]
    return needed


def _evictor_args(policy: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for profile in map(mapping_or_empty, list_or_empty(policy.get("profiles"))):
        for config in map(mapping_or_empty, list_or_empty(profile.get("pluginConfig"))):
            if config.get("name") == "DefaultEvictor":
                yield mapping_or_empty(config.get("args"))


def _value(run: DeschedulerRun, name: str) -> str | None:
    flag = run.flags.get(name)
    return flag.value if flag is not None and flag.value else None


def check(runs: Runs) -> Iterator[RepoHit]:
    for run in runs:
        account, namespace = run.service_account, run.namespace
        shown = f"{namespace}/{account}" if namespace else account
        grants = runs.grants_of(run)
        if not grants.bound(namespace, account):
            yield RepoHit(
                *run.where((*run.container[:-2], "serviceAccountName")),
                f"no RBAC for ServiceAccount {shown} in these files: desched cannot check the descheduler's "
                "permissions (nodes, pods, pods/eviction, and more by release and flags)",
                run.label,
                "info",
            )
            continue
        missing = [str(p) for p in required(run) if not grants.allows(namespace, account, p)]
        if missing:
            yield RepoHit(
                *run.where((*run.container[:-2], "serviceAccountName")),
                f"ServiceAccount {shown} may not {', '.join(dict.fromkeys(missing))}: the descheduler "
                "fails where it needs them (at start, in a plugin, or without a leader); grant them (a RoleBinding "
                "grants only in its namespace: cluster-wide reads and evictions need a ClusterRoleBinding)",
                run.label,
            )
