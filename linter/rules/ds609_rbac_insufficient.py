"""DS609: the descheduler's service account lacks a permission the descheduler needs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment import DeschedulerRun, Runs
    from desched.rbac import Permission

ID = "DS609"
NAME = "rbac-insufficient"
SEVERITY = "error"
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
_RBAC = """---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: descheduler}
rules:
- apiGroups: [""]
  resources: [nodes, pods, persistentvolumeclaims]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods/eviction]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: descheduler}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: descheduler}
subjects:
- {kind: ServiceAccount, name: descheduler, namespace: kube-system}
"""
EXAMPLES = {
    "pass": [runner("CronJob") + _RBAC],
    "fail": [
        runner("CronJob") + _RBAC.replace(", persistentvolumeclaims", ""),
        runner("CronJob")
        + _RBAC.replace("kind: ClusterRoleBinding", "kind: RoleBinding").replace(
            "metadata: {name: descheduler}\nroleRef", "metadata: {name: descheduler, namespace: kube-system}\nroleRef"
        ),
    ],
}
_READ = ("get", "list", "watch")


def required(run: DeschedulerRun) -> list[Permission]:
    """The permissions the descheduler of ``run`` needs, from its flags and image release (docs/deployment-rules.md)."""
    from desched.rbac import Permission  # only runs with a descheduler workload and its RBAC pay for it

    needed = [Permission("", resource, verb) for resource in ("nodes", "pods") for verb in _READ]
    if not run.enabled("dry-run"):
        needed.append(Permission("", "pods/eviction", "create"))
    release = run.release_minor
    if release is not None and release >= 35:
        needed += [Permission("", "persistentvolumeclaims", verb) for verb in _READ]
    if run.enabled("leader-elect"):
        namespace = _value(run, "leader-elect-resource-namespace") or "kube-system"
        name = _value(run, "leader-elect-resource-name") or "descheduler"
        needed.append(Permission("coordination.k8s.io", "leases", "create", namespace))
        needed += [Permission("coordination.k8s.io", "leases", verb, namespace, name) for verb in ("get", "update")]
    return needed


def _value(run: DeschedulerRun, name: str) -> str | None:
    flag = run.flags.get(name)
    return flag.value if flag is not None and flag.value else None


def check(runs: Runs) -> Iterator[RepoHit]:
    for run in runs:
        account, namespace = run.service_account, run.namespace
        shown = f"{namespace}/{account}" if namespace else account
        if not runs.grants.bound(namespace, account):
            yield RepoHit(
                *run.where((*run.container[:-2], "serviceAccountName")),
                f"no RBAC for ServiceAccount {shown} in these files: desched cannot check the descheduler's "
                "permissions (nodes, pods, pods/eviction, and more by release and flags)",
                run.label,
                "info",
            )
            continue
        missing = [str(p) for p in required(run) if not runs.grants.allows(namespace, account, p)]
        if missing:
            yield RepoHit(
                *run.where((*run.container[:-2], "serviceAccountName")),
                f"ServiceAccount {shown} may not {', '.join(dict.fromkeys(missing))}: the descheduler "
                "fails or runs without a leader; grant them (a RoleBinding grants only in its namespace: "
                "cluster-wide reads and evictions need a ClusterRoleBinding)",
                run.label,
            )
