"""Workloads that run the descheduler, for the examples of the deployment rules (DS6xx)."""

from __future__ import annotations

IMAGE = "registry.k8s.io/descheduler/descheduler:v0.36.0"
#: A ClusterRole with what the descheduler always needs (v0.36: PVC reads too), bound to ServiceAccount
#: kube-system/descheduler, which :func:`runner` workloads run as.
CLUSTER_RBAC = """---
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


def _indent(text: str, prefix: str) -> str:
    """``text`` with ``prefix`` before each non-empty line (textwrap's import is not worth its use here)."""
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(keepends=True))


def runner(
    kind: str,
    *args: str,
    replicas: int = 1,
    extra: str = "",
    concurrency: str | None = "Forbid",
    deadline: bool = True,
    container: str = "",
    pod: str = "",
    mounted: bool = True,
) -> str:
    """A ``kind`` (Deployment, CronJob or Job) whose container runs the descheduler with ``args``; ``extra`` is YAML
    added to the workload's ``spec``, ``container`` to the container, ``pod`` to the pod spec. A CronJob has
    ``concurrencyPolicy`` ``concurrency`` (``None``: not set) and, with ``deadline``, an ``activeDeadlineSeconds``
    in its job template; with ``mounted``, the policy ConfigMap is mounted where ``--policy-config-file`` points."""
    if mounted:
        container += "volumeMounts:\n- {name: policy, mountPath: /policy}\n"
        pod += "volumes:\n- name: policy\n  configMap: {name: descheduler-policy}\n"
    words = "".join(f"  - {arg}\n" for arg in ("--policy-config-file=/policy/policy.yaml", *args))
    spec_of_pod = (
        "serviceAccountName: descheduler\npriorityClassName: system-cluster-critical\n" + pod + "containers:\n"
        f"- name: descheduler\n  image: {IMAGE}\n  command: [/bin/descheduler]\n  args:\n"
        + _indent(words, "  ")
        + _indent(container, "  ")
    )
    group = "apps/v1" if kind == "Deployment" else "batch/v1"
    head = f"apiVersion: {group}\nkind: {kind}\nmetadata: {{name: descheduler, namespace: kube-system}}\nspec:\n"
    spec = extra
    if kind == "Deployment":
        spec += f"replicas: {replicas}\ntemplate:\n  spec:\n" + _indent(spec_of_pod, "    ")
    elif kind == "Job":
        spec += "template:\n  spec:\n" + _indent(spec_of_pod, "    ")
    else:
        spec += f"concurrencyPolicy: {concurrency}\n" if concurrency else ""
        spec += "schedule: '*/5 * * * *'\njobTemplate:\n  spec:\n"
        spec += "    activeDeadlineSeconds: 240\n" if deadline else ""
        spec += "    template:\n      spec:\n"
        spec += _indent(spec_of_pod, "        ")
    return head + _indent(spec, "  ")


def chart_install(version: str, values: str) -> str:
    """A Flux HelmRelease of the descheduler chart ``version`` with ``values`` (YAML) and a policy of no profiles."""
    lines = values + "deschedulerPolicy:\n  profiles: []\n"
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\n"
        f"spec:\n  chart:\n    spec:\n      chart: descheduler\n      version: {version}\n"
        "      sourceRef: {kind: HelmRepository, name: descheduler}\n  values:\n" + _indent(lines, "    ")
    )
