"""The release that runs a policy: inferred from what is deployed with it, and named in every release-dependent
finding (desched.deployment.releases)."""

from __future__ import annotations

import os
import pathlib

import pytest

from desched.chart.record import charts, values_read
from desched.deployment.releases import Deployments, chart_app_version, newest, release_of
from desched.gitops.documents import extract
from desched.linter.engine import Settings, lint_text
from desched.linter.lint import lint_paths
from desched.reading.yamlsrc import load_all

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "releases")

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: policy
  namespace: kube-system
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    profiles: []
"""

POD = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: descheduler
  namespace: {namespace}
spec:
  template:
    spec:
      containers:
      - name: descheduler
        image: {image}
        args: {args}
        volumeMounts: {mounts}
      volumes: {volumes}
"""


def _release(text: str) -> str:
    extraction = extract("x.yaml", text)
    deployments = Deployments(("x.yaml", doc) for doc in extraction.others)
    (policy,) = extraction.policies
    return release_of(policy, deployments).version


def _pod(
    image: str = "registry.k8s.io/descheduler/descheduler:v0.29.0",
    args: str = "[--policy-config-file, /policy-dir/policy.yaml]",
    mounts: str = "[{name: v, mountPath: /policy-dir}]",
    volumes: str = "[{name: v, configMap: {name: policy}}]",
    namespace: str = "kube-system",
) -> str:
    return CONFIGMAP + POD.format(image=image, args=args, mounts=mounts, volumes=volumes, namespace=namespace)


@pytest.mark.parametrize(
    ("pod", "version"),
    [
        pytest.param(_pod(), "v0.29.0", id="mounted-directory"),
        pytest.param(_pod(args="['--policy-config-file=/policy-dir/policy.yaml']"), "v0.29.0", id="flag-with-equals"),
        pytest.param(
            _pod(
                args="[--policy-config-file, /etc/d/conf.yaml]",
                mounts="[{name: v, mountPath: /etc/d}]",
                volumes="[{name: v, configMap: {name: policy, items: [{key: policy.yaml, path: conf.yaml}]}}]",
            ),
            "v0.29.0",
            id="items-rename-the-key",
        ),
        pytest.param(
            _pod(
                args="[--policy-config-file, /policy.yaml]",
                mounts="[{name: v, mountPath: /policy.yaml, subPath: policy.yaml}]",
            ),
            "v0.29.0",
            id="sub-path",
        ),
        pytest.param(
            _pod(volumes="[{name: v, projected: {sources: [{configMap: {name: policy}}]}}]"),
            "v0.29.0",
            id="projected",
        ),
        pytest.param(_pod(namespace="other"), "v0.36", id="other-namespace"),
        pytest.param(_pod(volumes="[{name: v, configMap: {name: another}}]"), "v0.36", id="other-configmap"),
        pytest.param(
            _pod(args="[--policy-config-file, /policy-dir/other.yaml]"), "v0.36", id="other-key-of-the-configmap"
        ),
        pytest.param(_pod(args="[--v, '3']"), "v0.36", id="no-policy-flag"),
        pytest.param(_pod(image="nginx:1.27"), "v0.36", id="not-a-descheduler"),
        pytest.param(_pod(image="registry.k8s.io/descheduler/descheduler@sha256:abc"), "v0.36", id="digest-only"),
        pytest.param(_pod(image="registry.k8s.io/descheduler/descheduler:v0.37.0"), "v0.37.0", id="newer-than-known"),
        pytest.param(_pod(image="localhost:5000/descheduler:v0.30.1-rc.0"), "v0.30.1", id="registry-port-and-rc"),
    ],
)
def test_the_workload_that_mounts_the_policy_names_its_release(pod: str, version: str):
    assert _release(pod) == version


def test_a_release_outside_the_known_range_is_checked_at_the_nearest_known_one():
    extraction = extract("x.yaml", _pod(image="descheduler/descheduler:v0.21.0"))
    release = release_of(extraction.policies[0], Deployments(("x.yaml", doc) for doc in extraction.others))
    assert (release.minor, release.target) == (21, 27)
    assert "checks it as v0.27, the oldest release it knows" in release.note()


def test_every_chart_version_of_the_records_maps_to_its_release():
    assert chart_app_version("0.25.2") == (25, "v0.25.1")  # the chart and the release parted here
    assert chart_app_version("0.23.1") == (23, "v0.23.0")
    assert chart_app_version("0.99.0") == (99, "v0.99.0")  # newer than the records: the chart's own number
    assert chart_app_version("descheduler-helm-chart-0.25.2") == (25, "v0.25.1")  # the chart's tag
    assert chart_app_version("not-a-version") is None
    for chart, entry in charts().items():
        app = entry["app_version"]
        assert chart_app_version(chart) == (int(app.split(".")[1]), f"v{app}")


def test_the_chart_reads_different_values_in_different_releases():
    assert "nodeSelector" not in values_read(20) and "nodeSelector" in values_read(21)
    assert "podSecurityPolicy" in values_read(24) and "podSecurityPolicy" not in values_read(25)
    # releases older or newer than every chart's read as the oldest and newest charts
    assert values_read(5) == values_read(18) and values_read(99) == values_read(36)


def _messages(run, rule: str) -> list[str]:
    return [f"{os.path.basename(f.file)}:{f.line}:{f.column} {f.message}" for f in run.findings if f.rule == rule]


def test_a_cronjob_in_another_file_sets_the_release_of_the_configmap_it_mounts():
    run = lint_paths([os.path.join(FIXTURES, "kustomize")])
    (message,) = _messages(run, "DS006")
    assert message.startswith('configmap.yaml:16:13 DefaultEvictor args: field "podProtections" was added')
    assert "release v0.28.1 assumed: the image registry.k8s.io/descheduler/descheduler:v0.28.1" in message
    assert "CronJob kube-system/descheduler-cronjob" in message and "cronjob.yaml:19" in message


def test_the_configmap_alone_is_checked_against_the_newest_release_and_says_why():
    run = lint_paths([os.path.join(FIXTURES, "kustomize", "base")])
    assert run.findings == []
    text = pathlib.Path(FIXTURES, "kustomize", "base", "configmap.yaml").read_text(encoding="utf-8")
    old = text.replace('podProtections:\n              extraEnabled: ["PodsWithPVC"]', "ignorePvcPods: false")
    (finding,) = [f for f in lint_text("configmap.yaml", old, Settings()).findings if f.rule == "DS103"]
    assert finding.message.endswith(f"({newest().note()})")


def test_a_configmap_generator_ties_a_policy_file_to_the_deployment_that_reads_it():
    run = lint_paths([os.path.join(FIXTURES, "generator")])
    (message,) = _messages(run, "DS007")
    assert message.startswith("descheduler-policy.yaml:1:13 descheduler v0.21.0 reads only descheduler/v1alpha1")
    assert "Deployment descheduler (" in message and "deployment.yaml:17" in message


def test_chart_yaml_app_version_and_top_level_values_the_chart_ignores():
    run = lint_paths([os.path.join(FIXTURES, "chart")])
    assert [m.split(" ", 1)[0] for m in _messages(run, "DS008")] == [
        "values.yaml:3:1",
        "values.yaml:4:1",
        "values.yaml:6:1",
    ]  # evictLocalStoragePods, namespaces, priorityThreshold; not the chart's own nodeSelector
    (gated,) = _messages(run, "DS006")
    assert "release v0.29.0 assumed: appVersion 0.29.0 of the Chart.yaml beside the values" in gated


def test_values_the_chart_of_an_older_release_does_not_read():
    values = "image: {tag: v0.20.0}\nnodeSelector: node-role=worker\ndeschedulerPolicy:\n  strategies: {}\n"
    (finding,) = [f for f in lint_text("values.yaml", values, Settings()).findings if f.rule == "DS008"]
    assert (finding.line, finding.column) == (2, 1)
    assert "belongs in deschedulerPolicy.nodeSelector" in finding.message
    assert "release v0.20.0 assumed: image.tag v0.20.0 in the chart's values" in finding.message


@pytest.mark.parametrize(
    ("wrapper", "version"),
    [
        pytest.param(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler}\nspec:\n"
            "  chart:\n    spec: {chart: descheduler, version: 0.25.2}\n  values:\n    deschedulerPolicy:\n"
            "      profiles: []\n",
            "v0.25.1",
            id="flux-helmrelease",
        ),
        pytest.param(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  source:\n"
            "    repoURL: https://kubernetes-sigs.github.io/descheduler/\n    chart: descheduler\n"
            "    targetRevision: 0.30.1\n    helm:\n      valuesObject:\n        deschedulerPolicy: {profiles: []}\n",
            "v0.30.1",
            id="argo-application",
        ),
        pytest.param(
            "helmCharts:\n- name: descheduler\n  repo: https://kubernetes-sigs.github.io/descheduler/\n"
            "  version: 0.33.0\n  valuesInline:\n    deschedulerPolicy: {profiles: []}\n",
            "v0.33.0",
            id="kustomize-helmcharts",
        ),
    ],
)
def test_the_chart_version_a_wrapper_pins_names_the_release(wrapper: str, version: str):
    (policy,) = extract("w.yaml", wrapper).policies
    release = release_of(policy, Deployments())
    assert release.version == version and "descheduler chart" in release.reason


def test_a_v1alpha1_policy_mounted_by_a_release_that_removed_v1alpha1():
    text = CONFIGMAP.replace(
        "descheduler/v1alpha2\n    kind: DeschedulerPolicy\n    profiles: []",
        "descheduler/v1alpha1\n    kind: DeschedulerPolicy\n    strategies:\n      RemoveDuplicates: {enabled: true}",
    ) + POD.format(
        image="registry.k8s.io/descheduler/descheduler:v0.31.0",
        args="[--policy-config-file, /policy-dir/policy.yaml]",
        mounts="[{name: v, mountPath: /policy-dir}]",
        volumes="[{name: v, configMap: {name: policy}}]",
        namespace="kube-system",
    )
    (finding,) = [f for f in lint_text("cm.yaml", text, Settings()).findings if f.rule == "DS101"]
    assert finding.severity == "error" and "release v0.31.0 assumed: the image" in finding.message
    older = text.replace("descheduler:v0.31.0", "descheduler:v0.30.2")
    (finding,) = [f for f in lint_text("cm.yaml", older, Settings()).findings if f.rule == "DS101"]
    assert finding.severity == "warning"


def test_the_option_and_the_configuration_override_what_is_deployed():
    text = _pod(image="registry.k8s.io/descheduler/descheduler:v0.21.0")
    assert any(f.rule == "DS007" for f in lint_text("x.yaml", text, Settings()).findings)
    chosen = lint_text("x.yaml", text, Settings(target=33))
    assert not any(f.rule == "DS007" for f in chosen.findings)
    assert chosen.checked[0].release.reason == "set by --target-version"
    configured = Settings(target=33, target_source="target-version in .desched.yaml")
    assert lint_text("x.yaml", text, configured).checked[0].release.reason == "set by target-version in .desched.yaml"


def test_deployments_ignore_documents_that_are_not_workloads():
    documents = load_all("kind: Deployment\nspec: [1]\n---\n- a list\n---\nkind: CronJob\nspec: {jobTemplate: 3}\n")
    assert not Deployments(("x.yaml", doc) for doc in documents)


HELMRELEASE_VALUES_FROM = """\
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
      version: "0.28.1"
      sourceRef: {kind: HelmRepository, name: descheduler, namespace: flux-system}
  valuesFrom:
    - kind: ConfigMap
      name: descheduler-values
      valuesKey: values.yaml
"""
VALUES_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: descheduler-values
  namespace: kube-system
data:
  values.yaml: |
    deschedulerPolicyAPIVersion: descheduler/v1alpha2
    deschedulerPolicy:
      gracePeriodSeconds: 30
      profiles: []
"""
KUSTOMIZATION_VALUES_FILE = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
helmCharts:
  - name: descheduler
    repo: https://kubernetes-sigs.github.io/descheduler/
    version: 0.32.2
    releaseName: descheduler
    valuesFile: values/descheduler.yaml
"""


def test_a_helmrelease_pins_the_release_of_the_values_configmap_it_reads(tmp_path):
    (tmp_path / "helmrelease.yaml").write_text(HELMRELEASE_VALUES_FROM)
    (tmp_path / "values.yaml").write_text(VALUES_CONFIGMAP)
    (message,) = _messages(lint_paths([str(tmp_path)]), "DS006")
    assert message.startswith('values.yaml:10:7 field "gracePeriodSeconds" was added in descheduler v0.33')
    assert "release v0.28.1 assumed: descheduler chart 0.28.1, pinned by HelmRelease kube-system/descheduler" in message
    other = VALUES_CONFIGMAP.replace("namespace: kube-system", "namespace: other")
    (tmp_path / "values.yaml").write_text(other)
    assert _messages(lint_paths([str(tmp_path)]), "DS006") == []


def test_a_kustomize_values_file_takes_the_chart_version_of_its_helmcharts_entry(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION_VALUES_FILE)
    (tmp_path / "values").mkdir()
    (tmp_path / "values" / "descheduler.yaml").write_text(
        "deschedulerPolicy:\n  gracePeriodSeconds: 30\n  profiles: []\n"
    )
    (message,) = _messages(lint_paths([str(tmp_path)]), "DS006")
    assert message.startswith("descheduler.yaml:2:3 ")
    assert "release v0.32.2 assumed: descheduler chart 0.32.2, pinned by kustomization helmCharts[0]" in message


GRACE_POLICY = CONFIGMAP.replace("    profiles: []", "    gracePeriodSeconds: 30\n    profiles: []")  # v0.33 on
STATEFULSET = """\
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: descheduler, namespace: kube-system}
spec:
  serviceName: descheduler
  template:
    spec:
      containers:
      - name: descheduler
        image: registry.k8s.io/descheduler/descheduler:v0.28.0
        args: [--policy-config-file, /policy-dir/policy.yaml, --descheduling-interval, 5m]
        volumeMounts: [{name: v, mountPath: /policy-dir}]
      volumes: [{name: v, configMap: {name: policy}}]
"""
DESCHED_RUN = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: desched, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - name: desched
        image: ghcr.io/desched/desched:0.1.0
        command: [desched, run, --policy, /policy/policy.yaml, --interval, 5m, %s]
        volumeMounts: [{name: policy, mountPath: /policy}]
      volumes: [{name: policy, configMap: {name: policy}}]
"""


# The release inference reads the deployment model (desched.deployment.runs) that the DS6xx rules and the webhook
# read: a descheduler of any workload kind, a ``desched run`` container, flags as pflag reads them (issue 36).


def _linted_as(text: str) -> tuple[str, str, list[str]]:
    """The release the policy of ``text`` is linted as, its reason, and the DS006 messages on the policy."""
    result = lint_text("x.yaml", text, Settings())
    (checked,) = result.checked
    release = checked.release
    return release.version, release.reason, [f.message for f in result.findings if f.rule == "DS006"]


def test_a_statefulset_running_the_descheduler_sets_the_release_of_the_policy_it_mounts():
    version, reason, gated = _linted_as(GRACE_POLICY + STATEFULSET)
    assert version == "v0.28.0"
    assert reason == (
        "the image registry.k8s.io/descheduler/descheduler:v0.28.0 of StatefulSet kube-system/descheduler (x.yaml:22), "
        "which reads this policy"
    )
    (message,) = gated
    assert "release v0.28.0 assumed" in message


@pytest.mark.parametrize("flag", ["--target-version, v0.30", "--target-version=v0.30"])
def test_a_desched_run_container_sets_the_release_of_its_policy_by_its_target_version(flag: str):
    version, reason, gated = _linted_as(GRACE_POLICY + DESCHED_RUN % flag)
    assert version == "v0.30"
    assert reason == "--target-version v0.30 of Deployment kube-system/desched (x.yaml:22), which reads this policy"
    (message,) = gated
    assert "release v0.30 assumed" in message


def test_the_last_of_a_repeated_policy_flag_is_the_policy_the_descheduler_reads():
    deployment = STATEFULSET.replace("kind: StatefulSet", "kind: Deployment")
    repeated = deployment.replace("args: [", "args: [--policy-config-file, /elsewhere/policy.yaml, ")
    assert _linted_as(GRACE_POLICY + deployment)[0] == "v0.28.0"
    assert _linted_as(GRACE_POLICY + repeated)[0] == "v0.28.0"  # pflag: the last one wins


def test_a_desched_run_container_without_target_version_makes_the_newest_decisions_and_says_so():
    version, reason, _ = _linted_as(GRACE_POLICY + DESCHED_RUN % "--dry-run")
    assert version == "v0.36"
    assert reason == (
        "desched run of Deployment kube-system/desched (x.yaml:20), which reads this policy, without --target-version"
    )


PDB_PROTECTED_POLICY = CONFIGMAP.replace(
    "    profiles: []",
    "    profiles:\n    - name: p\n      pluginConfig:\n      - name: DefaultEvictor\n"
    "        args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n"
    "      - name: PodLifeTime\n        args: {maxPodLifeTimeSeconds: 86400, states: [Pending]}\n"
    "      plugins:\n        deschedule:\n          enabled: [PodLifeTime]",
)


@pytest.mark.parametrize(
    ("reader", "warned"),
    [
        ("", True),  # v0.36 assumed: upstream's binary
        (STATEFULSET.replace("v0.28.0", "v0.36.0"), True),
        (STATEFULSET.replace("v0.28.0", "v0.35.1"), True),
        (STATEFULSET.replace("v0.28.0", "v0.34.0"), False),
        (DESCHED_RUN % "--dry-run", False),  # desched run lists the budgets itself
        (DESCHED_RUN % "--target-version=v0.36", False),
    ],
    ids=["assumed", "v0.36.0", "v0.35.1", "v0.34.0", "desched-run", "desched-run-v0.36"],
)
def test_ds212_warns_where_upstreams_real_runs_list_no_budget(reader: str, warned: bool):
    result = lint_text("x.yaml", PDB_PROTECTED_POLICY + reader, Settings())
    assert [f.rule for f in result.findings if f.rule == "DS212"] == (["DS212"] if warned else [])
