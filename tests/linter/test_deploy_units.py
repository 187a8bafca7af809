"""Deploy units (issue 37): one verdict per object however desched is started, judged as the cluster receives it.

The fixture repositories under tests/fixtures/units are shaped like public GitOps repositories: a kustomize base with
overlays and patches, a remote base with patches, a folder per cluster, a HelmRelease pinned through an
OCIRepository in a sibling file. The invariant test runs over every fixture repository of the suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.gitops.context import without_values
from desched.gitops.patches import apply_patches
from desched.gitops.units import deploy_units
from desched.linter.finding import Finding
from desched.linter.lint import lint_paths
from desched.reading.yamlsrc import load_all

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
UNITS = FIXTURES / "units"
INSTALLS = ROOT / "tests" / "linter" / "installs"
RENDERED = ROOT / "tests" / "kernel" / "render" / "golden"
#: Every fixture repository of the suite: each folder of tests/fixtures (each of units/ on its own), each chart
#: install of tests/linter/installs, the render goldens' inputs, and examples/.
REPOSITORIES = sorted(
    [path for path in FIXTURES.iterdir() if path.is_dir() and path.name != "units"]
    + [path for path in UNITS.iterdir() if path.is_dir()]
    + [path for path in INSTALLS.iterdir() if path.is_dir()]
    + [RENDERED, ROOT / "examples"]
)


def _repository(tmp_path: Path, source: Path) -> Path:
    """A copy of ``source`` as a Git checkout of its own (its root holds ``.git``)."""
    root = tmp_path / source.name
    shutil.copytree(source, root)
    (root / ".git").mkdir()
    return root


def _key(finding: Finding) -> tuple[object, ...]:
    """A finding with the paths it names as a run from the root names them (``desched lint .`` says ``./a.yaml``)."""
    message = re.sub(r"(?<![\w./])\./", "", finding.message)
    return (os.path.normpath(finding.file), finding.line, finding.column, finding.rule, finding.severity,
            message, re.sub(r"(?<![\w./])\./", "", finding.object), finding.suppressed)  # fmt: skip


def _files(root: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, dirs, names in os.walk(root)
        if ".git" not in Path(folder).parts
        for name in names
        if name.endswith((".yaml", ".yml", ".tpl", ".gotmpl"))
    )


@pytest.mark.parametrize("source", REPOSITORIES, ids=lambda path: path.name)
def test_a_file_alone_gets_exactly_the_findings_its_repository_run_reports_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path
):
    root = _repository(tmp_path, source)
    monkeypatch.chdir(root)
    whole = lint_paths(["."])
    for file in _files(root):
        alone = lint_paths([file])
        in_file = [_key(f) for f in whole.findings if os.path.normpath(f.file) == file]
        assert [_key(f) for f in alone.findings] == in_file, file


def _lint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, *paths: str) -> list[Finding]:
    root = _repository(tmp_path, UNITS / name)
    monkeypatch.chdir(root)
    return lint_paths(list(paths) or ["."]).findings


def test_a_patch_linted_alone_is_no_workload_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Observed 1: a patchesStrategicMerge CronJob fragment (command and args only) got DS607 error, DS606, DS610,
    DS609 and DS616 "image has no tag" alone; in its unit it is part of the base's CronJob, which is clean."""
    found = _lint(tmp_path, monkeypatch, "kustomize-overlays", "overlays/prod/cronjob-args.yaml")
    assert found == []


def test_a_patch_is_judged_where_it_lands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The dry-run overlay's JSON 6902 patch adds --dry-run to the base's CronJob: DS611 on the patch's value."""
    found = _lint(tmp_path, monkeypatch, "kustomize-overlays")
    (dry,) = [f for f in found if f.rule == "DS611"]
    assert (os.path.normpath(dry.file), dry.line) == ("overlays/dry/dry-run.yaml", 3)
    assert not [f for f in found if f.rule in ("DS607", "DS609", "DS610", "DS616")]


def test_patches_of_a_remote_base_are_no_workloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Observed 2: DS404 fired on patch fragments of the descheduler's Deployment from a remote base; DS701 now says
    once that the remote base is not checked."""
    found = _lint(tmp_path, monkeypatch, "remote-base")
    assert [(f.rule, os.path.normpath(f.file), f.line) for f in found] == [("DS701", "kustomization.yaml", 4)]


def test_folders_per_cluster_are_judged_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Observed 4: two folders define Deployment kube-system/descheduler, its policy ConfigMap and ClusterRole. East
    elects a leader and its ClusterRole grants the Leases: no DS609 (read repository-wide, west's ClusterRole of the
    same name hid east's grant); east keeps its DS607 (the policy key is missing, which west's ConfigMap of the same
    name hid); DS701 says once that the folders were told apart by guess."""
    found = _lint(tmp_path, monkeypatch, "per-cluster")
    rules = sorted((f.rule, os.path.normpath(f.file)) for f in found)
    assert rules == [("DS607", "clusters/east/descheduler.yaml"), ("DS701", "clusters/east/rbac.yaml")]
    (note,) = [f for f in found if f.rule == "DS701"]
    assert "clusters/west/rbac.yaml" in note.message


def test_a_helm_release_alone_finds_its_oci_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Observed 3: a HelmRelease pinned by an OCIRepository in a sibling file is judged alone as in its folder."""
    whole = _lint(tmp_path, monkeypatch, "flux-oci")
    alone = lint_paths(["helmrelease.yaml"]).findings
    assert [_key(f) for f in alone] == [_key(f) for f in whole if f.file.endswith("helmrelease.yaml")]
    assert whole and all("chart 0.31.0" in f.object or f.rule.startswith("DS1") for f in whole)


def test_a_file_outside_any_repository_is_judged_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "loose"
    shutil.copytree(UNITS / "kustomize-overlays", root)  # no .git, no .desched.yaml
    monkeypatch.chdir(root)
    found = lint_paths(["overlays/prod/cronjob-args.yaml"]).findings
    assert "DS607" in {f.rule for f in found}  # judged as the whole workload it is not: only context tells


def _docs(text: str) -> list[object]:
    return load_all(text)


BASE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: a
        image: x:1
        args: [--one]
        env: [{name: A, value: "1"}]
      - name: b
        image: y:1
"""


@pytest.mark.parametrize(
    ("patch", "path", "expected"),
    [
        # maps merge key by key
        ("kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3}\n", ("spec", "replicas"), 3),
        # containers merge by name; args (no merge key) are replaced
        (
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - {name: a, args: [--two]}\n",
            ("spec", "template", "spec", "containers", 0, "args"),
            ["--two"],
        ),
        # env merges by name
        (
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: a\n        env: [{name: B, value: '2'}]\n",
            ("spec", "template", "spec", "containers", 0, "env"),
            [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        ),
        # $patch: delete removes a container
        (
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - {name: a, $patch: delete}\n",
            ("spec", "template", "spec", "containers", 0, "name"),
            "b",
        ),
        # null removes a key
        ("kind: Deployment\nmetadata: {name: d}\nspec: {replicas: null}\n", ("spec", "replicas"), None),
        # another object's patch changes nothing
        ("kind: Deployment\nmetadata: {name: other}\nspec: {replicas: 3}\n", ("spec", "replicas"), 1),
        # JSON 6902: replace and add at the end of a list
        ("- {op: replace, path: /spec/replicas, value: 5}\n", ("spec", "replicas"), 5),
        (
            "- {op: add, path: /spec/template/spec/containers/0/args/-, value: --three}\n",
            ("spec", "template", "spec", "containers", 0, "args"),
            ["--one", "--three"],
        ),
        (
            "- {op: remove, path: /spec/template/spec/containers/1}\n",
            ("spec", "template", "spec", "containers", 1),
            None,
        ),
    ],
)
def test_patches_apply_as_kustomize_applies_them(patch: str, path: tuple[object, ...], expected: object):
    json6902 = patch.startswith("-")
    entry = (
        "patches:\n- path: patch.yaml\n  target: {kind: Deployment, name: d}\n"
        if json6902
        else ("patchesStrategicMerge: [patch.yaml]\n")
    )
    kustomization = load_all("resources: [base.yaml]\n" + entry)[0]
    documents = [("k/kustomization.yaml", kustomization), ("k/base.yaml", load_all(BASE)[0])]
    documents += [("k/patch.yaml", doc) for doc in load_all(patch)]
    unit = apply_patches(documents)
    (deployment,) = [doc for file, doc in unit.documents if file == "k/base.yaml"]
    node: object = deployment
    for part in path:
        node = (
            node.get(part)
            if isinstance(node, dict)
            else node[part]
            if isinstance(node, list) and part < len(node)
            else None
        )  # type: ignore[index,operator]
    assert node == expected
    assert unit.patch_files == frozenset({"k/patch.yaml"})


def test_a_patched_value_is_placed_in_its_patch_and_the_rest_in_the_resource():
    kustomization = load_all("resources: [base.yaml]\npatchesStrategicMerge: [patch.yaml]\n")[0]
    patch = load_all("kind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 3\n")[0]
    unit = apply_patches([("k/kustomization.yaml", kustomization), ("k/base.yaml", load_all(BASE)[0]),
                          ("k/patch.yaml", patch)])  # fmt: skip
    (patched,) = unit.patched.values()
    assert patched.where(("spec", "replicas")) == ("k/patch.yaml", 4, 13)
    assert patched.where(("spec", "template", "spec", "containers", 0, "image")) == ("k/base.yaml", 10, 16)
    assert patched.where(("metadata", "name"))[0] == "k/base.yaml"


def test_loose_folders_split_only_where_they_define_an_object_twice():
    def deployment(name: str) -> dict[str, object]:
        return {"kind": "Deployment", "metadata": {"name": name, "namespace": "kube-system"}}

    files = {
        "r/east/d.yaml": ("", [deployment("descheduler")]),
        "r/east/extra.yaml": ("", [deployment("other")]),
        "r/west/d.yaml": ("", [deployment("descheduler")]),
        "r/pdb.yaml": ("", [{"kind": "PodDisruptionBudget", "metadata": {"name": "p"}}]),
    }
    found = deploy_units(files)
    assert sorted(sorted(unit.files) for unit in found.units) == [
        ["r/east/d.yaml", "r/east/extra.yaml", "r/pdb.yaml"], ["r/pdb.yaml", "r/west/d.yaml"],
    ]  # fmt: skip
    (ambiguity,) = found.ambiguous
    assert ambiguity.object == "Deployment kube-system/descheduler"
    assert ambiguity.files == ("r/east/d.yaml", "r/west/d.yaml")
    del files["r/west/d.yaml"]
    assert [sorted(unit.files) for unit in deploy_units(files).units] == [sorted(files)]


def test_a_shared_base_is_judged_once_against_the_policies_of_every_unit_that_deploys_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Two overlays deploy one base of workloads, each with its own policy: the base's single-replica workload gets
    one DS404 naming both policies, not one per unit."""
    policy = (
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: {name}\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  plugins:\n    balance: {{enabled: [RemoveDuplicates]}}\n"
    )
    web = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      containers: [{name: web, image: web:1}]\n"
    )
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(web)
    (tmp_path / "apps" / "kustomization.yaml").write_text("resources: [web.yaml]\n")
    for name in ("east", "west"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "policy.yaml").write_text(policy.format(name=name))
        (tmp_path / name / "kustomization.yaml").write_text("resources: [../apps, policy.yaml]\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (single,) = [f for f in lint_paths(["."]).findings if f.rule == "DS404"]
    assert "profile east" in single.message and "and 1 more" in single.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # kustomize helmCharts: the inline values go, the values files stay
        (
            "helmCharts:\n- name: d\n  valuesInline:\n    a:\n      b: |\n        text\n\n  valuesFile: v.yaml\n",
            "helmCharts:\n- name: d\n  valuesInline:\n  valuesFile: v.yaml\n",
        ),
        # Argo CD: values text and object go, the source's path stays
        (
            "spec:\n  source:\n    helm:\n      values: |\n        a: b\n"
            "      valuesObject:\n        c: d\n    path: p\n",
            "spec:\n  source:\n    helm:\n      values:\n      valuesObject:\n    path: p\n",
        ),
        # a values key in a list item, and a flow value kept as written
        ("- values:\n    a: 1\n- path: x\n  values: {a: 1}\n", "- values:\n- path: x\n  values: {a: 1}\n"),
        ("resources: [a.yaml]\n", "resources: [a.yaml]\n"),
    ],
)
def test_the_index_reads_a_kustomization_or_deployer_without_its_chart_values(text: str, expected: str):
    assert without_values(text) == expected
    assert load_all(without_values(text))  # still YAML


def test_a_patch_of_a_remote_base_is_judged_only_for_what_it_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Its args, replicas and image are set whole: DS611 (--dry-run), DS601 (two replicas, no --leader-elect) and
    DS616 (no tag) judge them, on the patch's lines; what the base brings (volumes, RBAC, the priority class) is not
    judged, so no DS607, DS609 or DS610."""
    patch = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: descheduler, namespace: kube-system}\nspec:\n"
        "  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: descheduler\n"
        "        image: registry.k8s.io/descheduler/descheduler\n"
        "        args: [--policy-config-file=/p/policy.yaml, --descheduling-interval=5m, --dry-run]\n"
    )
    mounts = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: descheduler, namespace: kube-system}\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: descheduler\n"
        "        volumeMounts: [{name: extra, mountPath: /extra}]\n"
    )
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n- github.com/kubernetes-sigs/descheduler/kubernetes/deployment?ref=v0.31.0\n"
        "patches:\n- path: patch.yaml\n- path: mounts.yaml\n"
    )
    (tmp_path / "patch.yaml").write_text(patch)
    (tmp_path / "mounts.yaml").write_text(mounts)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    found = sorted((f.rule, os.path.normpath(f.file), f.line) for f in lint_paths(["."]).findings)
    assert found == [
        ("DS601", "patch.yaml", 5), ("DS611", "patch.yaml", 11), ("DS616", "patch.yaml", 10),
        ("DS701", "kustomization.yaml", 2),
    ]  # fmt: skip
    assert [(f.rule, f.line) for f in lint_paths(["patch.yaml"]).findings] == [
        ("DS601", 5),
        ("DS616", 10),
        ("DS611", 11),
    ]


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_KEYS = st.sampled_from(["spec", "template", "containers", "name", "args", "replicas", "$patch", "env", "a", "0"])
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)
_OPERATIONS = st.lists(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "copy", "move", "test", 5]),
         "path": st.sampled_from(["/spec/replicas", "/spec/template/spec/containers/0/args/-", "/x/0", "", "/", 5]),
         "from": st.sampled_from(["/spec", "/metadata/name", "/nope"]), "value": _TREES}
    ),
    max_size=4,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(patch=st.one_of(_TREES, _OPERATIONS, st.dictionaries(_KEYS, _TREES, max_size=3).map(
    lambda body: {"kind": "Deployment", "metadata": {"name": "d"}, **body})))  # fmt: skip
def test_any_patch_applies_without_error_and_leaves_the_resource_as_written(patch: object):
    """Patches are open-ended input: whatever a patch file holds, applying it raises nothing and changes a copy,
    never the resource the rules also read as written."""
    base = load_all(BASE)[0]
    before = json.dumps(base, sort_keys=True)
    kustomization = load_all("resources: [base.yaml]\npatches:\n- path: patch.yaml\n  target: {kind: Deployment}\n")[0]
    unit = apply_patches([("k/kustomization.yaml", kustomization), ("k/base.yaml", base), ("k/patch.yaml", patch)])
    assert json.dumps(base, sort_keys=True) == before
    assert {file for file, _ in unit.documents} <= {"k/kustomization.yaml", "k/base.yaml"}


@pytest.mark.parametrize(
    ("target", "applies"),
    [
        ("{kind: Deployment, name: d}", True),
        ("{kind: Deployment, name: 'd.*'}", True),  # kustomize reads a target's fields as regular expressions
        ("{kind: 'Deploy.*', name: '[cd]'}", True),
        ("{kind: Deployment, name: 'x.*'}", False),
        ("{kind: Deployment, name: '('}", False),  # not a regular expression: the name as written
        ("{kind: Deployment, namespace: ns, group: apps, version: v1}", True),
        ("{kind: Deployment, group: batch}", False),
        ("{labelSelector: 'app=web'}", False),
    ],
)
def test_a_patch_target_selects_as_kustomize_selects(target: str, applies: bool):
    kustomization = load_all(f"resources: [base.yaml]\npatches:\n- path: p.yaml\n  target: {target}\n")[0]
    patch = load_all("- {op: replace, path: /spec/replicas, value: 9}\n")[0]
    unit = apply_patches([("k/kustomization.yaml", kustomization), ("k/base.yaml", load_all(BASE)[0]),
                          ("k/p.yaml", patch)])  # fmt: skip
    (deployment,) = [doc for file, doc in unit.documents if file == "k/base.yaml"]
    assert (deployment["spec"]["replicas"] == 9) is applies
