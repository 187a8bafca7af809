"""Values files of kustomize helmCharts entries (desched.gitops.helmcharts): found from the kustomizations of the
file's directory and those above it, up to the repository's root."""

from __future__ import annotations

from pathlib import Path

from desched.gitops.helmcharts import is_values_file

KUSTOMIZATION = (
    "helmCharts:\n- name: descheduler\n  repo: https://kubernetes-sigs.github.io/descheduler/\n  version: 0.36.0\n"
    "  valuesFile: values/base.yaml\n  additionalValuesFiles: [values/prod.yaml]\n"
    "- {name: other, repo: https://charts.example.com, valuesFile: other.yaml}\n"
)


def test_the_files_a_descheduler_entry_names_are_values_files(tmp_path: Path):
    root = tmp_path / "repo" / "apps"
    (root / "values").mkdir(parents=True)
    (root / "kustomization.yaml").write_text(KUSTOMIZATION)
    for name in ("values/base.yaml", "values/prod.yaml", "values/staging.yaml", "other.yaml"):
        (root / name).write_text("replicas: 3\n")
    named = {name: is_values_file(str(root / name)) for name in ("values/base.yaml", "values/prod.yaml")}
    assert named == {"values/base.yaml": True, "values/prod.yaml": True}
    assert not is_values_file(str(root / "values" / "staging.yaml"))
    assert not is_values_file(str(root / "other.yaml"))  # another chart's values
    assert not is_values_file("-")


def test_the_search_stops_at_the_repository_root(tmp_path: Path):
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("values/base.yaml", "repo/values/base.yaml"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "values").mkdir()
    (repo / "values" / "base.yaml").write_text("replicas: 3\n")
    assert not is_values_file(str(repo / "values" / "base.yaml"))
