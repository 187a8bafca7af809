"""Workloads that run the descheduler, for the examples of the deployment rules (DS6xx)."""

from __future__ import annotations

import textwrap

IMAGE = "registry.k8s.io/descheduler/descheduler:v0.36.0"


def runner(kind: str, *args: str, replicas: int = 1, extra: str = "") -> str:
    """A ``kind`` (Deployment, CronJob or Job) whose container runs the descheduler with ``args``; ``extra`` is YAML
    added to the workload's ``spec``."""
    words = "".join(f"  - {arg}\n" for arg in ("--policy-config-file=/policy/policy.yaml", *args))
    pod = (
        "serviceAccountName: descheduler\npriorityClassName: system-cluster-critical\ncontainers:\n"
        f"- name: descheduler\n  image: {IMAGE}\n  command: [/bin/descheduler]\n  args:\n"
        + textwrap.indent(words, "  ")
    )
    group = "apps/v1" if kind == "Deployment" else "batch/v1"
    head = f"apiVersion: {group}\nkind: {kind}\nmetadata: {{name: descheduler, namespace: kube-system}}\nspec:\n"
    spec = extra
    if kind == "Deployment":
        spec += f"replicas: {replicas}\ntemplate:\n  spec:\n" + textwrap.indent(pod, "    ")
    elif kind == "Job":
        spec += "template:\n  spec:\n" + textwrap.indent(pod, "    ")
    else:
        spec += "schedule: '*/5 * * * *'\njobTemplate:\n  spec:\n    template:\n      spec:\n"
        spec += textwrap.indent(pod, "        ")
    return head + textwrap.indent(spec, "  ")
