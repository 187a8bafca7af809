"""The descheduler's own deployment (desched.deployment.runs): which containers run the descheduler, and their command
line read as pflag reads it, with the traps users write (``--flag=value``, ``--flag value``, bare booleans,
``--dry-run=false``, a boolean's next word that is not its value)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from desched.deployment.runs import descheduler_runs, parse_flags
from desched.linter.lint import lint_paths
from desched.linter.rules._deployment_examples import CLUSTER_RBAC, IMAGE, runner
from desched.reading.yamlsrc import load_all
from desched.workloads.model import WORKLOAD_KINDS, objects


def _flags(*words: str) -> dict[str, str]:
    return {name: flag.value for name, flag in parse_flags((word, ()) for word in words).items()}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("--descheduling-interval=5m",), {"descheduling-interval": "5m"}),
        (("--descheduling-interval", "5m"), {"descheduling-interval": "5m"}),
        (("--dry-run",), {"dry-run": "true"}),
        (("--dry-run=false",), {"dry-run": "false"}),
        # a boolean never takes the next word: "false" is a positional argument, and the flag is on
        (("--leader-elect", "false"), {"leader-elect": "true"}),
        (("-v", "3", "--dry-run"), {"v": "3", "dry-run": "true"}),
        (("--v=2", "--v=4"), {"v": "4"}),  # the last one wins
        (("/bin/descheduler", "--policy-config-file", "/p/policy.yaml"), {"policy-config-file": "/p/policy.yaml"}),
    ],
)
def test_flags_are_read_as_pflag_reads_them(words, expected):
    assert _flags(*words) == expected


@pytest.mark.parametrize(
    ("image", "command", "runs"),
    [
        ("registry.k8s.io/descheduler/descheduler:v0.36.0", "[]", True),
        ("mirror.example:5000/platform/descheduler@sha256:" + "a" * 64, "[]", True),
        ("busybox:1.36", "[/bin/descheduler]", True),
        ("nginx:1.27", "[nginx]", False),
        ("registry.k8s.io/descheduler-operator:v1", "[]", False),
    ],
)
def test_a_container_runs_the_descheduler_by_its_image_or_binary(image, command, runs):
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n"
        f"      - name: c\n        image: {image}\n        command: {command}\n"
    )
    assert bool(list(descheduler_runs(objects([("f.yaml", load_all(text)[0])])))) is runs


def test_items_of_a_list_are_read_and_positions_point_at_the_flag():
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + line + "\n" if index == 0 else "  " + line + "\n"
        for index, line in enumerate(runner("CronJob", "--dry-run").splitlines())
    )
    (run,) = descheduler_runs(objects([("f.yaml", load_all(text)[0])]))
    assert run.kind == "CronJob" and run.enabled("dry-run")
    _, line, _ = run.at_flag("dry-run")
    assert text.splitlines()[line - 1].strip() == "- --dry-run"


def test_a_repository_without_any_policy_gets_the_deployment_rules(tmp_path: Path):
    (tmp_path / "descheduler.yaml").write_text(runner("Deployment", "--dry-run"))
    found = {(f.rule, f.line) for f in lint_paths([str(tmp_path)]).findings}
    assert {rule for rule, _ in found} == {"DS604", "DS609", "DS611"}  # DS609: no RBAC here, an info


def test_comment_suppression_applies_to_deployment_findings(tmp_path: Path):
    text = runner("CronJob", "--dry-run").replace("- --dry-run", "- --dry-run  # desched: disable=DS611 trial week")
    (tmp_path / "cronjob.yaml").write_text(text)
    (finding,) = [f for f in lint_paths([str(tmp_path)]).findings if f.rule != "DS609"]  # DS609: no RBAC here
    assert finding.rule == "DS611" and finding.suppressed


def test_an_annotation_suppresses_rules_on_its_object_where_comments_did_not_survive_rendering(tmp_path: Path):
    text = runner("CronJob", "--dry-run").replace(
        "metadata: {name: descheduler, namespace: kube-system}",
        "metadata:\n  name: descheduler\n  namespace: kube-system\n"
        "  annotations: {desched.io/ignore: 'dry-run-enabled, DS999'}",
    )
    (tmp_path / "cronjob.yaml").write_text(text)
    (finding,) = [f for f in lint_paths([str(tmp_path)]).findings if f.rule != "DS609"]
    assert finding.rule == "DS611" and finding.suppressed == "annotation desched.io/ignore"


def _grants(text: str):
    from desched.deployment.rbac import Grants

    return Grants(objects([("rbac.yaml", doc) for doc in load_all(text)]))


RBAC = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: leases, namespace: kube-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [descheduler]
  verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leases, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: leases}
subjects: [{kind: ServiceAccount, name: descheduler, namespace: tools}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: all}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: everything}
subjects: [{kind: ServiceAccount, name: admin, namespace: tools}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: everything}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
"""


@pytest.mark.parametrize(
    ("account", "permission", "allowed"),
    [
        (("tools", "descheduler"), ("coordination.k8s.io", "leases", "create", "kube-system", None), True),
        (("tools", "descheduler"), ("coordination.k8s.io", "leases", "get", "kube-system", "descheduler"), True),
        # resourceNames restricts the rule to that Lease
        (("tools", "descheduler"), ("coordination.k8s.io", "leases", "get", "kube-system", "other"), False),
        # a RoleBinding grants in its own namespace only, never cluster-wide
        (("tools", "descheduler"), ("coordination.k8s.io", "leases", "create", "tools", None), False),
        (("tools", "descheduler"), ("", "nodes", "list", None, None), False),
        (("tools", "admin"), ("", "nodes", "list", None, None), True),  # "*" everywhere through a ClusterRoleBinding
        (("other", "admin"), ("", "nodes", "list", None, None), False),  # another namespace's account
    ],
)
def test_rbac_grants_as_the_api_server_evaluates_them(account, permission, allowed):
    from desched.deployment.rbac import Permission

    assert _grants(RBAC).allows(*account, Permission(*permission)) is allowed


# an image whose tag names no release is the newest's, as the release inference (and DS616) assume
@pytest.mark.parametrize(
    ("image", "needs_pvc"), [("v0.34.0", False), ("v0.35.0", True), ("v0.36.0", True), ("latest", True)]
)
def test_the_pvc_read_is_required_from_release_0_35(image, needs_pvc):
    from desched.deployment.access import required

    text = runner("CronJob").replace("v0.36.0", image)
    (run,) = descheduler_runs(objects([("f.yaml", load_all(text)[0])]))
    assert any(p.resource == "persistentvolumeclaims" for p in required(run)) is needs_pvc


def test_leader_election_needs_leases_in_its_resource_namespace_not_the_pods():
    from desched.deployment.access import required

    text = runner("Deployment", "--descheduling-interval=5m", "--leader-elect", "--leader-elect-resource-name=ds")
    (run,) = descheduler_runs(objects([("f.yaml", load_all(text)[0])]))
    leases = {(p.verb, p.namespace, p.name) for p in required(run) if p.resource == "leases"}
    assert leases == {("create", "kube-system", None), ("get", "kube-system", "ds"), ("update", "kube-system", "ds")}


_INFORMERS = (
    "list namespaces, watch namespaces, list priorityclasses.scheduling.k8s.io, watch priorityclasses.scheduling.k8s.io"
)
_PDB_INFORMER = "list poddisruptionbudgets.policy, watch poddisruptionbudgets.policy"
_INFORMER_RBAC = """- apiGroups: ["", scheduling.k8s.io, policy]
  resources: [namespaces, priorityclasses, poddisruptionbudgets]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [pods/eviction]"""


@pytest.mark.parametrize(
    ("image", "args", "missing"),
    [
        # upstream's informers, started whatever the policy (pkg/descheduler/descheduler.go: v0.27.0 lines 212-213,
        # v0.30.1 lines 89-90 and 415-416, v0.32.0 ir.Uses with PodDisruptionBudgets); from v0.35 the dry-run's
        *[(f"v0.{minor}.0", (), _INFORMERS) for minor in range(27, 32)],
        ("v0.33.0", (), f"{_INFORMERS}, {_PDB_INFORMER}"),
        ("v0.36.0", ("--dry-run",), f"{_INFORMERS}, {_PDB_INFORMER}"),
        ("v0.36.0", (), None),
    ],
)
def test_ds609_requires_the_informers_each_release_starts(tmp_path: Path, image, args, missing):
    text = runner("CronJob", *args).replace("v0.36.0", image) + CLUSTER_RBAC
    (tmp_path / "descheduler.yaml").write_text(text)
    found = [f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS609"]
    assert [(f.severity, f"may not {missing}:" in f.message) for f in found] == ([("error", True)] if missing else [])
    (tmp_path / "descheduler.yaml").write_text(
        text.replace('- apiGroups: [""]\n  resources: [pods/eviction]', _INFORMER_RBAC)
    )
    assert [f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS609"] == []


def _policy_configmap(namespace: str, policy: str) -> str:
    body = "".join(f"    {line}\n" for line in policy.splitlines())
    return (
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: descheduler-policy, namespace: {namespace}}}\n"
        "data:\n  policy.yaml: |\n    apiVersion: descheduler/v1alpha2\n    kind: DeschedulerPolicy\n" + body
    )


_PDB_POLICY = """profiles:
- name: p
  pluginConfig:
  - name: DefaultEvictor
    args: {ignorePodsWithoutPDB: true, priorityThreshold: {name: high}}
  - name: RemoveDuplicates
  plugins:
    balance: {enabled: [RemoveDuplicates]}
"""
_PROMETHEUS_POLICY = """metricsProviders:
- source: Prometheus
  prometheus:
    url: https://prometheus.monitoring:9090
    authToken:
      secretReference: {namespace: monitoring, name: prometheus-token}
profiles: []
"""


@pytest.mark.parametrize(
    ("namespace", "policy", "missing"),
    [
        # the mounted ConfigMap's policy adds PDB reads (PodsWithoutPDB) and get priorityclasses (a named threshold)
        ("kube-system", _PDB_POLICY, ["poddisruptionbudgets.policy", "get priorityclasses.scheduling.k8s.io"]),
        # a ConfigMap of that name in another namespace is not the one the pod mounts: nothing is added
        ("default", _PDB_POLICY, []),
        # the Prometheus token's Secret is read in its own namespace
        ("kube-system", _PROMETHEUS_POLICY, ["secrets in namespace monitoring"]),
    ],
)
def test_the_mounted_policy_adds_its_permissions(tmp_path: Path, namespace, policy, missing):
    text = runner("CronJob") + CLUSTER_RBAC + _policy_configmap(namespace, policy)
    (tmp_path / "descheduler.yaml").write_text(text)
    found = [f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS609"]
    assert bool(found) == bool(missing)
    assert all(needed in found[0].message for needed in missing)


def _container(image: str, command: list[str] | None, args: list[str]) -> dict[str, Any]:
    """A Job in namespace ``ops`` whose one container runs ``command`` and ``args`` in ``image``."""
    spec: dict[str, Any] = {"name": "c", "image": image, "args": args}
    if command is not None:
        spec["command"] = command
    pod = {"containers": [spec]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ops"},
            "spec": {"template": {"spec": pod}}}  # fmt: skip


@pytest.mark.parametrize("kind", list(WORKLOAD_KINDS))
def test_a_workload_of_any_kind_may_run_the_descheduler(kind: str):
    """Every kind of the one table of workload kinds, its pod template where the table says, ``spec.replicas`` read
    for the kinds it counts pods of."""
    doc: dict[str, Any] = {
        "spec": {"containers": [{"name": "c", "image": IMAGE, "args": ["--descheduling-interval=5m"]}]}
    }
    for part in reversed(WORKLOAD_KINDS[kind].template):
        doc = {str(part): doc}
    doc["spec"]["replicas"] = 3
    (run,) = descheduler_runs([("w.yaml", {**doc, "kind": kind, "metadata": {"name": "d"}})])
    assert (run.kind, run.replicas, run.duration("descheduling-interval")) == (
        kind, 3 if WORKLOAD_KINDS[kind].scalable else 1, 5 * 60 * 10**9,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("image", "command", "args", "program"),
    [
        ("ghcr.io/acme/desched:1.0", None, ["run", "--policy", "/p/policy.yaml"], "desched"),
        ("python:3.12", ["desched", "run"], ["--policy=/p/policy.yaml"], "desched"),
        ("ghcr.io/acme/desched:1.0", None, ["lint", "/p"], None),  # not the executor
        (
            "registry.k8s.io/descheduler/descheduler:v0.36.0",
            None,
            ["--policy-config-file=/p/policy.yaml"],
            "descheduler",
        ),
    ],
)
def test_desched_run_is_a_descheduler_with_its_flags_under_upstreams_names(image, command, args, program):
    runs = list(descheduler_runs([("j.yaml", _container(image, command, args))]))
    assert [run.program for run in runs] == ([program] if program else [])
    if runs:
        assert runs[0].flags["policy-config-file"].value == "/p/policy.yaml"


def test_desched_run_serves_healthz_only_with_its_metrics_address():
    (quiet,) = descheduler_runs([("j.yaml", _container("desched", None, ["run", "--policy", "/p/x"]))])
    assert quiet.flags["secure-port"].value == "0"
    args = ["run", "--policy", "/p/x", "--metrics-bind-address", "0.0.0.0:9443", "--target-version", "v0.34"]
    (served,) = descheduler_runs([("j.yaml", _container("desched", None, args))])
    assert served.flags["secure-port"].value == "9443" and served.release_minor == 34


def test_environment_references_in_arguments_are_expanded_as_the_kubelet_does():
    env = (
        "env:\n- {name: LEASES, value: ops-leases}\n"
        "- name: NS\n  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}\n"
    )
    doc = _container(IMAGE, None, ["--leader-elect-resource-namespace=$(NS)", "--leader-elect-resource-name",
                                   "$(LEASES)", "--v=$(UNSET)"])  # fmt: skip
    doc["spec"]["template"]["spec"]["containers"][0]["env"] = load_all(env)[0]["env"]
    (run,) = descheduler_runs([("j.yaml", doc)])
    assert {name: flag.value for name, flag in run.flags.items()} == {
        "leader-elect-resource-namespace": "ops", "leader-elect-resource-name": "ops-leases", "v": "$(UNSET)",
    }  # fmt: skip


def test_descheds_own_deploy_tree_is_clean():
    """desched's Kustomize bases (deploy/), the executor `desched run` included, pass every rule: no finding but the
    dry-run overlay's own --dry-run (its patch applied to the CronJob), suppressed where the patch adds it. The chart's
    templates (deploy/chart/desched/templates) are linted as Go templates; tests/chart lints what they render."""
    root = Path(__file__).resolve().parents[3]
    found = lint_paths([str(root / "deploy")]).findings
    assert [(f.rule, f.file, f.line) for f in found if f.suppressed is None] == []
    (dry_run,) = [f for f in found if f.suppressed is not None]
    assert dry_run.rule == "DS611" and dry_run.file.endswith("dry-run/kustomization.yaml")


@pytest.mark.parametrize("key", ["patchesStrategicMerge: [cronjob-patch.yaml]", "patches:\n- path: cronjob-patch.yaml"])
def test_a_kustomize_patch_is_not_a_workload_of_its_own(tmp_path: Path, key: str):
    (tmp_path / "base").mkdir()
    (tmp_path / "overlay").mkdir()
    (tmp_path / "base" / "cronjob.yaml").write_text(runner("CronJob"))
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [cronjob.yaml]\n")
    (tmp_path / "overlay" / "kustomization.yaml").write_text(f"resources: [../base]\n{key}\n")
    # a partial CronJob: no image, no mounts, no concurrencyPolicy; kustomize merges it into the base's
    patch = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: descheduler, namespace: kube-system}\nspec:\n"
    patch += "  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n"
    patch += "          - name: descheduler\n            command: [/bin/descheduler, --v=4]\n"
    (tmp_path / "overlay" / "cronjob-patch.yaml").write_text(patch)
    found = [f for f in lint_paths([str(tmp_path)]).findings if f.rule != "DS609"]  # DS609: no RBAC here
    assert {Path(f.file).name for f in found} <= {"cronjob.yaml"}


@pytest.mark.parametrize(
    ("generator", "missing"),
    [
        ("files: [policy.yaml]", False),
        ("files: [policy.yml]", True),  # the key is the file's name
        ("files: [policy.yaml=policy.yml]", False),  # key=file
        ("literals: [policy.yaml=profiles]", False),
    ],
)
def test_the_policy_key_is_looked_for_in_a_generated_configmap(tmp_path: Path, generator: str, missing: bool):
    (tmp_path / "cronjob.yaml").write_text(runner("CronJob"))
    (tmp_path / "policy.yml").write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n")
    (tmp_path / "kustomization.yaml").write_text(
        f"resources: [cronjob.yaml]\nconfigMapGenerator:\n- name: descheduler-policy\n  {generator}\n"
    )
    found = [f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS607"]
    assert bool(found) == missing
    assert all("key policy.yaml of ConfigMap descheduler-policy" in f.message for f in found)
