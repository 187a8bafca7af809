"""One cluster at a time: a policy meets only the workloads and PDBs of the clusters it deploys to
(desched.gitops.clusters)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desched.cli import main
from desched.errors import ConfigError
from desched.linter.config import load
from desched.linter.lint import lint_paths, settings_from

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "clusters")

POLICY = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: descheduler-policy-configmap, namespace: kube-system}
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    profiles:
      - name: default
        pluginConfig: [{name: RemoveDuplicates}]
        plugins: {balance: {enabled: [RemoveDuplicates]}}
"""


def _worker(name: str) -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: 1\n"
        f"  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
        "    spec: {containers: [{name: w, image: busybox}]}\n"
    )


def _flux(name: str, path: str) -> str:
    return (
        f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, "
        f"namespace: flux-system}}\nspec:\n  interval: 10m\n  path: {path}\n  prune: true\n"
        "  sourceRef: {kind: GitRepository, name: flux-system}\n"
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _flagged(paths: list[str], **settings: object) -> set[str]:
    run = lint_paths(paths, **settings)  # type: ignore[arg-type]
    return {os.path.basename(f.file) for f in run.findings if f.rule in ("DS401", "DS404")}


def test_a_policy_meets_only_the_workloads_of_its_kustomization_root():
    assert _flagged([FIXTURE]) == {"web.yaml", "worker.yaml"}
    run = lint_paths([FIXTURE])
    files = {os.path.relpath(f.file, FIXTURE) for f in run.findings}
    assert files == {"apps/base/web.yaml", "apps/prod/worker.yaml"}  # not apps/staging/worker.yaml


def test_scope_shows_the_cluster_of_each_pairing(capsys):
    assert main(["scope", "--format", "json", FIXTURE]) == 0
    (policy,) = json.loads(capsys.readouterr().out)["policies"]
    assert [os.path.relpath(name, FIXTURE) for name in policy["clusters"]] == ["clusters/prod"]
    names = {entry["name"] for entry in policy["workloads"]}
    assert names == {"web", "worker-prod"}


def test_a_repository_without_structure_is_one_cluster(tmp_path: Path):
    _write(tmp_path, {"policy.yaml": POLICY, "prod/worker.yaml": _worker("a"), "staging/worker.yaml": _worker("b")})
    run = lint_paths([str(tmp_path)])
    assert {os.path.relpath(f.file, tmp_path) for f in run.findings} == {"prod/worker.yaml", "staging/worker.yaml"}


def test_flux_kustomizations_split_a_repository_into_clusters(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": _flux("flux-system", "./clusters/prod"),
            "clusters/prod/infrastructure.yaml": _flux("infrastructure", "./infrastructure/prod"),
            "clusters/prod/apps.yaml": _flux("apps", "./apps/prod"),
            "clusters/staging/flux-system/gotk-sync.yaml": _flux("flux-system", "./clusters/staging"),
            "clusters/staging/apps.yaml": _flux("apps", "./apps/staging"),
            "infrastructure/prod/descheduler/policy.yaml": POLICY,
            "apps/prod/worker.yaml": _worker("prod-worker"),
            "apps/staging/worker.yaml": _worker("staging-worker"),
        },
    )
    run = lint_paths([str(tmp_path)])
    assert {os.path.relpath(f.file, tmp_path) for f in run.findings} == {"apps/prod/worker.yaml"}


def test_argo_cd_applications_split_a_repository_into_clusters(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    application = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n"
        "  project: default\n  source:\n    repoURL: https://git.example.com/platform.git\n"
        "    targetRevision: main\n    path: {path}\n  destination: {{server: {server}}}\n"
    )
    _write(
        tmp_path,
        {
            "argocd/prod.yaml": application.format(name="prod", path="envs/prod", server="https://prod"),
            "argocd/staging.yaml": application.format(name="staging", path="envs/staging", server="https://stg"),
            "envs/staging/descheduler.yaml": POLICY,
            "envs/staging/worker.yaml": _worker("staging-worker"),
            "envs/prod/worker.yaml": _worker("prod-worker"),
        },
    )
    run = lint_paths([str(tmp_path)])
    assert {os.path.relpath(f.file, tmp_path) for f in run.findings} == {"envs/staging/worker.yaml"}


def test_the_configuration_replaces_the_structure(tmp_path: Path):
    _write(
        tmp_path,
        {
            "policy.yaml": POLICY,
            "prod/worker.yaml": _worker("a"),
            "staging/worker.yaml": _worker("b"),
            ".desched.yaml": "clusters:\n  prod: [policy.yaml, prod]\n  staging: staging/**\n",
        },
    )
    settings = settings_from(load(str(tmp_path / ".desched.yaml")))
    run = lint_paths([str(tmp_path)], settings)
    assert {os.path.relpath(f.file, tmp_path) for f in run.findings} == {"prod/worker.yaml"}


@pytest.mark.parametrize("value", ["[a, b]", "{prod: 3}", "{prod: []}", "{prod: [1]}"])
def test_clusters_must_map_names_to_globs(tmp_path: Path, value: str):
    (tmp_path / ".desched.yaml").write_text(f"clusters: {value}\n")
    with pytest.raises(ConfigError, match="clusters"):
        load(str(tmp_path / ".desched.yaml"))
