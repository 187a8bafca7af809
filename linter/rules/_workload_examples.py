"""Building blocks for the DS40x rules' examples: a policy and workloads in one multi-document snippet."""

from __future__ import annotations

POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: default\n  pluginConfig:\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)


def deployment(name: str, replicas: int, volumes: str = "", priority: str = "", namespace: str = "shop") -> str:
    """A Deployment ``name`` labelled ``app: name``; ``volumes`` is a flow list, ``priority`` a class name."""
    extra = f"      volumes: {volumes}\n" if volumes else ""
    extra += f"      priorityClassName: {priority}\n" if priority else ""
    return (
        f"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n"
        f"  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n"
        f"    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: c, image: i}}]\n{extra}"
    )


def pdb(name: str, app: str, budget: str = "maxUnavailable: 1", namespace: str = "shop") -> str:
    return (
        f"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec:\n  {budget}\n  selector: {{matchLabels: {{app: {app}}}}}\n"
    )
