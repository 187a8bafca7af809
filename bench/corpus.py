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


HELMRELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: descheduler
  namespace: kube-system
spec:
  interval: 1h
  chart:
    spec:
      chart: descheduler
      version: "0.3{minor}.0"
      sourceRef: {{kind: HelmRepository, name: descheduler, namespace: flux-system}}
  values:
    kind: Deployment
    deschedulingInterval: 5m
    deschedulerPolicy:
{policy}"""

APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: descheduler-{n}
  namespace: argocd
spec:
  project: platform
  destination: {{server: https://cluster-{n}.example, namespace: kube-system}}
  source:
    repoURL: https://kubernetes-sigs.github.io/descheduler/
    chart: descheduler
    targetRevision: 0.3{minor}.0
    helm:
      values: |
        deschedulerPolicy:
{policy}"""

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: kube-system
resources:
  - ../../apps
helmCharts:
  - name: descheduler
    repo: https://kubernetes-sigs.github.io/descheduler/
    version: 0.3{minor}.0
    releaseName: descheduler
    valuesInline:
      deschedulerPolicy:
{policy}"""


def _policy_body(values: dict[str, int], indent: int) -> str:
    """The profiles of :data:`POLICY` (no apiVersion or kind: the chart writes them), indented."""
    body = POLICY.format(**values).split("\n", 2)[2]
    return "".join(" " * indent + line + "\n" for line in body.splitlines())


def write_gitops_tree(root: str, count: int, seed: int = 11) -> list[str]:
    """Write ``count`` GitOps files (a third each: Flux HelmReleases, Argo CD Applications with values as a string,
    kustomizations with helmCharts) under ``clusters/<n>/``, beside a shared ``apps/`` folder of Deployments and
    PDBs that every kustomization deploys; returns the wrapper files' paths."""
    rng = random.Random(seed)
    apps = os.path.join(root, "apps")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "kustomization.yaml"), "w", encoding="utf-8") as handle:
        handle.write("resources:\n" + "".join(f"  - app-{n}.yaml\n" for n in range(0, 20, 2)))
    for n in range(0, 20, 2):
        with open(os.path.join(apps, f"app-{n}.yaml"), "w", encoding="utf-8") as handle:
            handle.write(render(2, n, rng) + "---\n" + render(3, n + 1, rng))
    paths = []
    for n in range(count):
        values = {
            "n": n, "limit": rng.randint(1, 20), "low": rng.randint(5, 30), "high": rng.randint(40, 90),
            "restarts": rng.randint(5, 200), "lifetime": rng.randint(3600, 864000),
        }  # fmt: skip
        minor = 4 + n % 3  # chart 0.34.0 to 0.36.0: releases that read podProtections
        folder = os.path.join(root, "clusters", f"cluster-{n}")
        os.makedirs(folder, exist_ok=True)
        if n % 3 == 0:
            name, text = "descheduler.yaml", HELMRELEASE.format(minor=minor, policy=_policy_body(values, 6))
        elif n % 3 == 1:
            name, text = "descheduler.yaml", APPLICATION.format(n=n, minor=minor, policy=_policy_body(values, 10))
        else:
            name, text = "kustomization.yaml", KUSTOMIZATION.format(minor=minor, policy=_policy_body(values, 8))
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        paths.append(path)
    return paths


VALUES_SHAPES = ("helmCharts", "valuesFrom")  # the two shapes of :func:`write_values_sources`

_VALUES_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
helmCharts:
  - name: descheduler
    repo: https://kubernetes-sigs.github.io/descheduler/
    version: 0.36.0
    releaseName: descheduler
    namespace: kube-system
    additionalValuesFiles:
"""

_VALUES_HELMRELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: descheduler
  namespace: kube-system
spec:
  interval: 1h
  chart:
    spec:
      chart: descheduler
      version: 0.36.0
      sourceRef: {kind: HelmRepository, name: descheduler}
  valuesFrom:
"""

_VALUES_CONFIGMAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: v-{n}
  namespace: kube-system
data:
  values.yaml: |
    deschedulerPolicy:
      maxNoOfPodsToEvictPerNode: {limit}
"""


def write_values_sources(root: str, count: int, shape: str) -> list[str]:
    """Write one install of the descheduler chart with ``count`` values sources under ``root``: ``helmCharts``, a
    kustomization whose entry lists ``count`` ``additionalValuesFiles`` (every other one sets
    ``deschedulerPolicy``, the others ``replicas``); ``valuesFrom``, a HelmRelease naming ``count`` ConfigMaps, each
    a ``values.yaml`` key setting ``deschedulerPolicy``, all in one file. Returns the files written."""
    os.makedirs(root, exist_ok=True)
    if shape == "helmCharts":
        names = [f"values-{n}.yaml" for n in range(count)]
        texts = {"kustomization.yaml": _VALUES_KUSTOMIZATION + "".join(f"      - {name}\n" for name in names)}
        for n, name in enumerate(names):
            texts[name] = (
                f"deschedulerPolicy:\n  maxNoOfPodsToEvictPerNode: {n + 1}\n" if n % 2 else f"replicas: {n % 3 + 1}\n"
            )
    elif shape == "valuesFrom":
        entries = "".join(f"    - kind: ConfigMap\n      name: v-{n}\n" for n in range(count))
        texts = {
            "release.yaml": _VALUES_HELMRELEASE + entries,
            "configmaps.yaml": "".join(_VALUES_CONFIGMAP.format(n=n, limit=n + 1) for n in range(count)),
        }
    else:
        raise ValueError(f"no values-sources shape {shape!r}: one of {', '.join(VALUES_SHAPES)}")
    paths = []
    for name, text in texts.items():
        path = os.path.join(root, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        paths.append(path)
    return paths


# Hostile files for the lint limits (README.md, Limits): each the worst of its kind found, all under the read limit.
HOSTILE = {
    "empty-profiles": "empty profiles (`- name: pN`) up to 8 MiB: issue 23, 31 s and 1.4 GB before the limits",
    "empty-mappings": "`- {}` lines up to 8 MiB: the most memory per YAML node",
    "unknown-plugins": "a policy of 100,000 YAML nodes enabling 99,984 unknown plugins: the most rule work",
    "tiny-documents": "a policy and 249,994 documents `k: v`, 750,000 YAML nodes: the most work per node",
}
_HEAD = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"


def _filled(head: str, line: str, size: int) -> str:
    """``head``, then ``line`` (formatted with its index ``i``) as often as the text stays within ``size`` bytes."""
    parts, used, index = [head], len(head), 0
    while True:
        text = line.format(i=index)
        if used + len(text) > size:
            return "".join(parts)
        parts.append(text)
        used += len(text)
        index += 1


def hostile(name: str, size: int) -> str:
    """The text of hostile file ``name`` (one of :data:`HOSTILE`); ``size`` bounds the files made of lines (the
    others fill desched's node limits)."""
    from desched.gitops.policylimits import MAX_POLICY_NODES
    from desched.reading.yamlnodes import MAX_EXPANDED_NODES

    if name == "empty-profiles":
        return _filled(_HEAD + "profiles:\n", "- name: p{i}\n", size)
    if name == "empty-mappings":
        return _filled("", "- {{}}\n", size)
    profile = _HEAD + "profiles:\n- name: p\n  plugins:\n    balance:\n      enabled:\n"  # 16 YAML nodes
    if name == "unknown-plugins":
        return profile + "".join(f"      - X{i}\n" for i in range(MAX_POLICY_NODES - 16))
    if name == "tiny-documents":
        policy = profile + "      - LowNodeUtilization\n"  # 17 YAML nodes
        return policy + "---\nk: v\n" * ((MAX_EXPANDED_NODES - 17) // 3)
    raise ValueError(f"no hostile file {name!r}")
