"""Every descheduler of a repository (:func:`repository_runs`): the containers that run it among the repository's
workloads and what the chart renders for each install of it, each with the policy it reads, the RBAC objects beside
them and the namespaces kustomize gives their files. The DS6xx rules judge these :class:`Runs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from desched.deployment.runs import DeschedulerRun, descheduler_runs
from desched.gitops.clusters import KUSTOMIZATION_NAMES
from desched.gitops.documents import PolicyDoc, Shape
from desched.tree import at_path, list_or_empty, mapping_or_empty, same_namespace

if TYPE_CHECKING:
    from desched.deployment.rbac import Grants
    from desched.gitops.patches import UnitObjects
    from desched.tree import Path
    from desched.versions import KubernetesVersion

__all__ = ["PATCH_PARTS", "RBAC_KINDS", "Runs", "patched_parts", "remote_patch_runs", "repository_runs"]


class Runs(list[DeschedulerRun]):
    """The descheduler containers of a run, with the RBAC objects of the same documents (:meth:`grants_of`), the
    ServiceAccounts, ConfigMaps and RoleBindings they may name (:attr:`named`) with the namespaces kustomize gives
    each file (:meth:`namespaces_of`), and the cluster's Kubernetes version when the configuration names it
    (:attr:`kubernetes`, set by the lint engine)."""

    def __init__(
        self,
        runs: Iterable[DeschedulerRun],
        rbac: Iterable[tuple[str, Any]] = (),
        named: Iterable[tuple[str, Any]] = (),
        kustomized: Mapping[str, frozenset[str]] | None = None,
        configmaps: Mapping[str, set[tuple[str | None, str]]] | None = None,
    ) -> None:
        super().__init__(runs)
        self.kubernetes: KubernetesVersion | None = None  # desched cannot tell it from the files
        self._rbac = list(rbac)
        self._grants: dict[tuple[int, ...], Grants] = {}  # by the identities of the run's own RBAC objects
        self.named = list(named)
        self._kustomized = kustomized or {}
        #: The repository's ConfigMaps by name, each with its (namespace, data key) pairs
        self.configmaps = configmaps or {}

    def configmap_keys(self, name: str, namespace: str | None) -> set[str] | None:
        """The data keys of the repository's ConfigMaps named ``name`` that may be in ``namespace``; ``None`` when
        the repository holds no ConfigMap of that name (it may exist in the cluster)."""
        found = self.configmaps.get(name)
        if not found:
            return None
        return {key for space, key in found if same_namespace(space, namespace)}

    def namespaces_of(self, file: str, doc: Any) -> frozenset[str | None]:
        """The namespaces the object ``doc`` of ``file`` lands in: those kustomize gives the file, else its own
        (``None``: none, it lands where it is applied)."""
        found = self._kustomized.get(os.path.normpath(file))
        if found:
            return frozenset(found)
        namespace = mapping_or_empty(doc.get("metadata")).get("namespace") if isinstance(doc, Mapping) else None
        return frozenset({namespace if isinstance(namespace, str) and namespace else None})

    def grants_of(self, run: DeschedulerRun) -> Grants:
        """The grants ``run``'s service account may hold: the repository's (Cluster)Roles and bindings with the
        run's own (:attr:`DeschedulerRun.rbac`), read once each (:mod:`desched.deployment.rbac`)."""
        own = tuple(id(doc) for _, doc in run.rbac)
        found = self._grants.get(own)
        if found is None:
            if () not in self._grants:
                from desched.deployment.rbac import Grants

                self._grants[()] = Grants(self._rbac)  # the repository's, read once
            found = self._grants[own] = self._grants[()].extended(run.rbac)
        return found


#: The kinds :class:`Runs` reads besides workloads.
RBAC_KINDS = frozenset({"ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"})


def repository_runs(unit: UnitObjects, policies: Iterable[tuple[PolicyDoc, Mapping[str, Any]]] = ()) -> Runs:
    """Every descheduler of one deploy unit: the workloads among the ``unit``'s objects (after its kustomize patches;
    a patch is no workload) and what the chart renders for each install among ``policies`` (documents with their
    effective v1alpha2 trees), with the RBAC objects of both. A workload is paired with the policy of the ConfigMap
    key its mount reads, when the unit holds it."""
    from desched.gitops.kustomize import kustomized_namespaces
    from desched.workloads.model import objects

    listed = list(objects(unit.documents))
    policies = list(policies)
    # the policies held in ConfigMap keys, by (namespace, ConfigMap, key)
    mounted = {doc.extra["configmap"]: (doc, tree) for doc, tree in policies if doc.extra.get("configmap")}
    kustomized = kustomized_namespaces(listed)
    trees = {identity: tree for identity, (_, tree) in mounted.items()}
    runs = [_kustomized(run, kustomized)._replace(policy=_mounted_policy(run, trees), written_at=_written_at(run, unit))
            for run in descheduler_runs(listed)]  # fmt: skip
    if any(doc.shape == Shape.HELM for doc, _ in policies):
        from desched.deployment.chartrender import ChartDoc
        from desched.deployment.chartruns import chart_run

        for doc, tree in policies:
            run = chart_run(doc, tree) if isinstance(doc, ChartDoc) and doc.primary else None
            if run is not None and run.policy is None:  # no policy of the chart's: it reads the user's ConfigMap
                run = run._replace(policy=_mounted_policy(run, trees))
            runs.extend([run] if run is not None else [])
    rbac = [(file, doc) for file, doc in listed if doc.get("kind") in RBAC_KINDS]
    named = [(f, doc) for f, doc in listed if doc.get("kind") in _NAMED_KINDS]
    # a ConfigMap that holds a policy is among the policies, not the other documents: its name and namespace
    named += [
        (doc.file, {"kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}})
        for (namespace, name, _), (doc, _) in mounted.items()
    ]
    return Runs(runs, rbac, named, kustomized, _configmap_keys(listed, mounted))


def _configmap_keys(
    listed: list[tuple[str, Any]], mounted: Mapping[tuple[str | None, str, str], object]
) -> dict[str, set[tuple[str | None, str]]]:
    """The ConfigMaps of the repository by name, each with its (namespace, data key) pairs: written ones, the keys
    that hold the ``mounted`` policies, and those a kustomize ``configMapGenerator`` makes of files or literals."""
    from desched.deployment.releases import generated_configmap_keys

    keys: dict[str, set[tuple[str | None, str]]] = {}
    for file, doc in listed:
        metadata = mapping_or_empty(doc.get("metadata"))
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if doc.get("kind") == "ConfigMap" and isinstance(name, str):
            written = [*mapping_or_empty(doc.get("data")), *mapping_or_empty(doc.get("binaryData"))]
            keys.setdefault(name, set()).update((namespace if isinstance(namespace, str) else None, k) for k in written)
        if os.path.basename(file) in KUSTOMIZATION_NAMES:
            for _, (space, generated, key) in generated_configmap_keys(file, doc):
                keys.setdefault(generated, set()).add((space, key))
            for generator in map(mapping_or_empty, list_or_empty(doc.get("configMapGenerator"))):
                literals = [str(entry).partition("=")[0] for entry in list_or_empty(generator.get("literals"))]
                if isinstance(generator.get("name"), str):
                    keys.setdefault(generator["name"], set()).update((None, key) for key in literals)
    for namespace, name, key in mounted:
        keys.setdefault(name, set()).add((namespace, key))
    return keys


#: The namespaced objects a descheduler workload names or is granted through (DS608).
_NAMED_KINDS = frozenset({"ServiceAccount", "ConfigMap", "RoleBinding"})


def _kustomized(run: DeschedulerRun, kustomized: Mapping[str, frozenset[str]]) -> DeschedulerRun:
    """``run`` in the namespace kustomize gives its file, when that is one."""
    found = kustomized.get(os.path.normpath(run.file))
    return run._replace(namespace=next(iter(found))) if found and len(found) == 1 else run


def _written_at(run: DeschedulerRun, unit: UnitObjects) -> Callable[[Path], tuple[str, int, int]] | None:
    """Where the paths of ``run``'s workload are written, when a patch of the unit changed it."""
    patched = unit.patched.get(id(run.document))
    return patched.where if patched is not None else None


def _mounted_policy(
    run: DeschedulerRun, mounted: Mapping[tuple[str | None, str, str], Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    for name, key in run.policy_keys:
        for (namespace, configmap, data_key), tree in mounted.items():
            if (configmap, data_key) == (name, key) and same_namespace(namespace, run.namespace):
                return tree
    return None


#: The parts of a descheduler workload a kustomize patch may set whole, each with the paths (from the container,
#: or from the pod spec, or from the workload) whose presence in the patch says it does: strategic merge replaces
#: a list without a merge key (``args``, ``command``) and a scalar whole, so the patch then says all there is.
PATCH_PARTS = {
    "args": ("container", ("args",)),
    "image": ("container", ("image",)),
    "probe": ("container", ("livenessProbe",)),
    "priority": ("pod", ("priorityClassName",)),
    "replicas": ("workload", ("spec", "replicas")),
}


def patched_parts(run: DeschedulerRun) -> frozenset[str]:
    """The parts of :data:`PATCH_PARTS` that the patch ``run`` was read from sets."""
    roots = {"container": run.container, "pod": run.container[:-2], "workload": ()}
    return frozenset(
        part for part, (root, path) in PATCH_PARTS.items() if at_path(run.document, (*roots[root], *path)) is not None
    )


def remote_patch_runs(unit: UnitObjects) -> list[tuple[DeschedulerRun, frozenset[str]]]:
    """The descheduler containers of the ``unit``'s patches of a remote base, each with the parts the patch sets:
    what desched can judge of a workload it does not see (:attr:`desched.gitops.patches.UnitObjects.remote`)."""
    from desched.workloads.model import objects

    runs = descheduler_runs(list(objects(unit.remote)), patches=True)
    return [(run, parts) for run in runs if (parts := patched_parts(run))]
