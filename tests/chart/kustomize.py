"""deploy/'s kustomizations built for comparison with the chart: by ``kubectl kustomize`` when kubectl is installed and
its kustomize knows every field deploy/ uses (v4.1 or later: ``labels``), else by the subset of Kustomize these files
use, in Kustomize's order: ``resources``, ``configMapGenerator`` (without a name hash), ``patches`` (RFC 6902 or
map-only strategic merge, tests/webhook/test_deploy.py's), ``namespace``, ``labels`` (metadata only) and ``images``.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.webhook.test_deploy import _json_patch, _load, _matches, _merge

Obj = dict[str, Any]
CLUSTER_KINDS = {"Namespace", "ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration"}
# The Kustomization fields these builds implement; another field in deploy/ fails the Python build.
IMPLEMENTED = {
    "apiVersion",
    "kind",
    "resources",
    "namespace",
    "labels",
    "patches",
    "images",
    "configMapGenerator",
    "generatorOptions",
}


@functools.cache
def kubectl_kustomize_version() -> tuple[int, ...] | None:
    """The version of kubectl's embedded kustomize, ``None`` without kubectl (or when it does not say)."""
    if shutil.which("kubectl") is None:
        return None
    done = subprocess.run(["kubectl", "version", "--client"], capture_output=True, text=True, timeout=60)
    found = re.search(r"Kustomize Version: v(\d+)\.(\d+)\.(\d+)", done.stdout)
    return tuple(int(part) for part in found.groups()) if found else None


def build(directory: Path) -> list[Obj]:
    """The objects of the kustomization in ``directory`` (kubectl's build when it can, else the Python subset)."""
    version = kubectl_kustomize_version()
    if version is not None and version >= (4, 1):
        done = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    return build_python(directory)


def build_python(directory: Path) -> list[Obj]:
    """The Python subset of Kustomize (the module's docstring)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unsupported = set(kustomization) - IMPLEMENTED
    assert not unsupported, f"{directory}: this build does not implement {unsupported}"
    assert kustomization.get("generatorOptions", {}) in ({}, {"disableNameSuffixHash": True}), directory
    objects: list[Obj] = []
    for entry in kustomization.get("resources", []):
        target = directory / entry
        objects += build_python(target) if target.is_dir() else _load(target)
    for generator in kustomization.get("configMapGenerator", []):
        data = {name: (directory / name).read_text() for name in generator["files"]}
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": generator["name"]}, "data": data})
    for entry in kustomization.get("patches", []):
        patch = yaml.safe_load(entry["patch"])
        if isinstance(patch, list):
            target = entry["target"]
        else:
            target = {"kind": patch["kind"], "name": patch["metadata"]["name"], **entry.get("target", {})}
        (chosen,) = [obj for obj in objects if _matches(obj, target)]
        _json_patch(chosen, patch) if isinstance(patch, list) else _merge(chosen, patch)
    for obj in objects:
        if "namespace" in kustomization and obj["kind"] not in CLUSTER_KINDS:
            obj["metadata"]["namespace"] = kustomization["namespace"]
        for label in kustomization.get("labels", []):
            assert set(label) == {"pairs"}, "only metadata labels are implemented"
            obj["metadata"].setdefault("labels", {}).update(label["pairs"])
    for image in kustomization.get("images", []):
        for obj in objects:
            for container in _containers(obj):
                if container["image"].split(":")[0] == image["name"]:
                    container["image"] = f"{image['newName']}:{image['newTag']}"
    return objects


def _containers(obj: Obj) -> list[Obj]:
    """The containers of a workload's pod template (none for other kinds)."""
    spec = obj.get("spec") or {}
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    template = spec.get("template") if isinstance(spec, dict) else None
    return list(template["spec"]["containers"]) if template else []
