"""Generated inputs for the lint benchmarks: policies, policy ConfigMaps, Deployments and PDBs.

``write_tree(root, count)`` writes ``count`` files under ``root`` in a few nested folders, deterministically.
"""

from __future__ import annotations

import os
import random

POLICY = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictPerNode: {limit}
profiles:
  - name: profile-{n}
    pluginConfig:
      - name: DefaultEvictor
        args:
          podProtections:
            defaultDisabled: [PodsWithLocalStorage]
            extraEnabled: [PodsWithPVC]
      - name: RemoveDuplicates
      - name: LowNodeUtilization
        args:
          thresholds: {{cpu: {low}, memory: {low}, pods: {low}}}
          targetThresholds: {{cpu: {high}, memory: {high}, pods: {high}}}
      - name: RemovePodsHavingTooManyRestarts
        args:
          podRestartThreshold: {restarts}
          includingInitContainers: true
      - name: PodLifeTime
        args:
          maxPodLifeTimeSeconds: {lifetime}
          namespaces:
            exclude: [kube-system]
    plugins:
      balance:
        enabled: [RemoveDuplicates, LowNodeUtilization]
      deschedule:
        enabled: [RemovePodsHavingTooManyRestarts, PodLifeTime]
"""

CONFIGMAP_HEAD = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: descheduler-{n}
  namespace: kube-system
data:
  policy.yaml: |
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n}
  namespace: team-{team}
  labels: {{app: app-{n}}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: app-{n}}}
  template:
    metadata:
      labels: {{app: app-{n}}}
    spec:
      containers:
        - name: main
          image: registry.example/app-{n}:1.{n}
          ports: [{{containerPort: 8080}}]
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{memory: 256Mi}}
          readinessProbe:
            httpGet: {{path: /healthz, port: 8080}}
"""

PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: app-{app}
  namespace: team-{team}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {{app: app-{app}}}
"""


def render(kind: int, n: int, rng: random.Random) -> str:
    values = {
        "n": n, "team": n % 17, "limit": rng.randint(1, 20), "low": rng.randint(5, 30), "high": rng.randint(40, 90),
        "restarts": rng.randint(5, 200), "lifetime": rng.randint(3600, 864000), "replicas": rng.randint(1, 6),
        "app": n - 1,  # a PDB file covers the Deployment written just before it
    }  # fmt: skip
    if kind == 0:
        return POLICY.format(**values)
    if kind == 1:
        body = POLICY.format(**values)
        return CONFIGMAP_HEAD.format(**values) + "".join("    " + line + "\n" for line in body.splitlines())
    if kind == 2:
        return DEPLOYMENT.format(**values)
    return PDB.format(**{**values, "team": (n - 1) % 17})


def write_tree(root: str, count: int, seed: int = 7) -> list[str]:
    """Write ``count`` YAML files (a quarter of each kind) under ``root``; returns their paths."""
    rng = random.Random(seed)
    paths = []
    for n in range(count):
        folder = os.path.join(root, f"team-{n % 17}", ("policies", "configmaps", "apps", "pdbs")[n % 4])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"file-{n}.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(render(n % 4, n, rng))
        paths.append(path)
    return paths
