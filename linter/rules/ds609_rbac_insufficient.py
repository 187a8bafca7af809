"""DS609: the descheduler's service account lacks a permission the descheduler needs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import CLUSTER_RBAC, runner

if TYPE_CHECKING:
    from desched.deployment.repository import Runs

ID = "DS609"
NAME = "rbac-insufficient"
SEVERITY = "error"
SEVERITY_NOTE = "info when the files hold no RBAC for the account (nothing to check)"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "Descheduler service account without a permission the descheduler needs"
RATIONALE = (
    "The descheduler lists and watches nodes and pods cluster-wide and evicts through `pods/eviction`; v0.23 to "
    "v0.34 also watch namespaces and priorityclasses, v0.32 to v0.34 poddisruptionbudgets (upstream #1595), v0.35 on "
    "persistentvolumeclaims (#1839, PR #1836) and, with `--dry-run`, those three; with `--leader-elect` it needs "
    "Leases in `--leader-elect-resource-namespace` (kube-system unless set, not its own namespace; PR #722); the "
    "policy's plugins and options add theirs (`desched.deployment.access`). A missing grant fails every run or leaves "
    "it without a leader. A RoleBinding grants only in its namespace, so cluster-scoped nodes need a "
    "ClusterRoleBinding (#251, #377)."
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


def check(runs: Runs) -> Iterator[RepoHit]:
    from desched.deployment.access import required  # only runs with a descheduler workload pay for the declaration

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
