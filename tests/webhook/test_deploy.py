"""deploy/webhook: every overlay installs a hardened, highly available ``desched webhook`` with read-only RBAC and a
webhook configuration that sends exactly the contracted requests, with the documented failure policies.

Each overlay is built twice when possible: by a small reimplementation of the Kustomize features these files use
(``resources``, ``namespace``, ``labels``, ``patches`` as JSON 6902 or map-only strategic merge, ``images``), which
needs no binary, and by ``kubectl kustomize`` when kubectl is on PATH; the two builds must agree. With the test
control plane installed, every object the server serves is also created with ``dryRun=All`` (server-side validation)
and every field set must survive the round trip (an unknown or misspelt field is dropped by the server).
"""

from __future__ import annotations

import copy
import functools
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "webhook"
OVERLAYS = ("self-signed", "cert-manager", "warn")
NAMESPACE = "desched-system"
SERVICE = "desched-webhook"
SECRET = "desched-webhook-tls"
CONFIGURATION = "desched"
IMAGE = "ghcr.io/desched/desched:0.1.0"
POLICY_LABEL = {"desched.io/policy": "true"}
CLUSTER_KINDS = {"Namespace", "ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration"}
INSTALL_KINDS = {
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Deployment",
    "PodDisruptionBudget",
    "Service",
    "NetworkPolicy",
    "ValidatingWebhookConfiguration",
}
CERT_MANAGER_KINDS = {"Issuer", "Certificate"}

# The contract: what each webhook entry sends, as (group, version, resource, operation).
CREATE_UPDATE = ("CREATE", "UPDATE")
RULES = {
    "policies.desched.io": {("", "v1", "configmaps", op) for op in CREATE_UPDATE},
    "kubedeschedulers.desched.io": {("operator.openshift.io", "v1", "kubedeschedulers", op) for op in CREATE_UPDATE},
    "workloads.desched.io": {
        *{
            ("apps", "v1", resource, op)
            for resource in ("deployments", "statefulsets", "replicasets")
            for op in CREATE_UPDATE
        },
        *{("", "v1", "replicationcontrollers", op) for op in CREATE_UPDATE},
        *{("batch", "v1", resource, op) for resource in ("jobs", "cronjobs") for op in CREATE_UPDATE},
        *{
            ("policy", version, "poddisruptionbudgets", op)
            for version in ("v1", "v1beta1")
            for op in ("CREATE", "UPDATE", "DELETE")
        },
    },
    "wrappers.desched.io": {
        *{
            ("helm.toolkit.fluxcd.io", version, "helmreleases", op)
            for version in ("v2", "v2beta2", "v2beta1")
            for op in CREATE_UPDATE
        },
        *{
            ("argoproj.io", "v1alpha1", resource, op)
            for resource in ("applications", "applicationsets")
            for op in CREATE_UPDATE
        },
    },
}
POLICY_WEBHOOKS = ("policies.desched.io", "kubedeschedulers.desched.io", "wrappers.desched.io")
# The contract: read-only, on exactly these (group, resource).
READS = {
    ("", "namespaces"),
    ("", "persistentvolumeclaims"),
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "replicasets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("policy", "poddisruptionbudgets"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("storage.k8s.io", "storageclasses"),
}
# The active policy (--policy-configmap): the one ConfigMap the webhook may read, in its own namespace.
POLICY_NAMESPACE, POLICY_NAME = "kube-system", "descheduler"
POLICY_ROLE = "desched-webhook-policy"
# The contract: `desched webhook` flags (all take a value); --deny is optional.
REQUIRED_FLAGS = {"--host", "--port", "--tls-cert", "--tls-key", "--metrics-port", "--mode", "--policy-configmap"}
OPTIONAL_FLAGS = {"--deny"}

Obj = dict[str, Any]


# -- a minimal Kustomize --------------------------------------------------------------------------------------------


def _load(path: Path) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _pointer(path: str) -> list[str]:
    assert path.startswith("/"), path
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _json_patch(obj: Obj, operations: list[Obj]) -> None:
    """RFC 6902 ``add``, ``replace``, ``remove`` and ``test``: the operations these overlays use."""
    for operation in operations:
        *parents, last = _pointer(operation["path"])
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        op = operation["op"]
        if op == "test":
            current = node[int(last)] if isinstance(node, list) else node.get(last)
            assert current == operation["value"], f"test {operation['path']}: {current!r} != {operation['value']!r}"
        elif op == "add" and isinstance(node, list):
            node.insert(len(node) if last == "-" else int(last), operation["value"])
        elif op in ("add", "replace"):
            if isinstance(node, list):
                node[int(last)] = operation["value"]
            else:
                assert op == "add" or last in node, f"replace of a missing {operation['path']}"
                node[last] = operation["value"]
        elif op == "remove":
            del node[int(last) if isinstance(node, list) else last]
        else:
            raise AssertionError(f"unsupported JSON patch operation {op}")


def _merge(target: Obj, patch: Obj) -> None:
    """A strategic merge patch made of maps only (lists would need the merge keys, which these files never need)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            assert not isinstance(value, list), f"strategic merge of list {key} is not supported here"
            target[key] = copy.deepcopy(value)


def _matches(obj: Obj, target: Obj) -> bool:
    return all(
        obj.get(key) == value if key in ("kind",) else obj["metadata"].get(key) == value
        for key, value in target.items()
    )


def _pod_templates(obj: Obj) -> Iterator[Obj]:
    spec = obj.get("spec") or {}
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    if "template" in spec:
        yield spec["template"]["spec"]


def _build_python(directory: Path) -> list[Obj]:
    """The objects of a kustomization: resources, then patches, namespace, labels and images in Kustomize's order."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unsupported = set(kustomization) - {"apiVersion", "kind", "resources", "namespace", "labels", "patches", "images"}
    assert not unsupported, f"{directory}: this test's Kustomize does not implement {unsupported}"
    objects: list[Obj] = []
    for entry in kustomization.get("resources", []):
        target = directory / entry
        objects += _build_python(target) if target.is_dir() else _load(target)
    for entry in kustomization.get("patches", []):
        patch = yaml.safe_load(entry["patch"])
        if isinstance(patch, list):
            chosen = [obj for obj in objects if _matches(obj, entry["target"])]
        else:
            target = {"kind": patch["kind"], "name": patch["metadata"]["name"], **entry.get("target", {})}
            chosen = [obj for obj in objects if _matches(obj, target)]
        assert len(chosen) == 1, f"{directory}: patch {entry} matches {len(chosen)} objects"
        _json_patch(chosen[0], patch) if isinstance(patch, list) else _merge(chosen[0], patch)
    if "namespace" in kustomization:
        for obj in objects:
            if obj["kind"] not in CLUSTER_KINDS:
                obj["metadata"]["namespace"] = kustomization["namespace"]
    for label in kustomization.get("labels", []):
        assert set(label) == {"pairs"}, "only metadata labels are implemented"
        for obj in objects:
            obj["metadata"].setdefault("labels", {}).update(label["pairs"])
    for image in kustomization.get("images", []):
        for obj in objects:
            for pod in _pod_templates(obj):
                for container in pod["containers"]:
                    if container["image"].split(":")[0] == image["name"]:
                        container["image"] = f"{image['newName']}:{image['newTag']}"
    return objects


@functools.cache
def _kubectl_kustomize(overlay: str) -> str:
    done = subprocess.run(["kubectl", "kustomize", str(DEPLOY / overlay)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _build(overlay: str, builder: str) -> list[Obj]:
    if builder == "kubectl":
        if shutil.which("kubectl") is None:
            pytest.skip("kubectl (for kubectl kustomize) is not installed")
        return [doc for doc in yaml.safe_load_all(_kubectl_kustomize(overlay)) if doc]
    return _build_python(DEPLOY / overlay)


@pytest.fixture(
    params=[(overlay, builder) for overlay in OVERLAYS for builder in ("python", "kubectl")],
    ids=lambda param: f"{param[0]}-{param[1]}",
)
def built(request: pytest.FixtureRequest) -> tuple[str, list[Obj]]:
    overlay, builder = request.param
    return overlay, _build(overlay, builder)


def _one(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = [obj for obj in objects if obj["kind"] == kind and (name is None or obj["metadata"]["name"] == name)]
    assert len(found) == 1, f"{len(found)} {kind} {name or ''}"
    return found[0]


def _deployment(objects: list[Obj]) -> Obj:
    return _one(objects, "Deployment", "desched-webhook")


def _container(objects: list[Obj]) -> Obj:
    (container,) = _deployment(objects)["spec"]["template"]["spec"]["containers"]
    return dict(container)


def _flags(args: list[str]) -> dict[str, str]:
    assert args[0] == "webhook"
    assert len(args[1:]) % 2 == 0, args
    pairs = list(zip(args[1::2], args[2::2], strict=True))
    flags = dict(pairs)
    assert len(flags) == len(pairs), f"a flag given twice: {args}"
    return flags


def _webhooks(objects: list[Obj]) -> dict[str, Obj]:
    configuration = _one(objects, "ValidatingWebhookConfiguration", CONFIGURATION)
    return {webhook["name"]: webhook for webhook in configuration["webhooks"]}


def _excluded(selector: Obj) -> set[str]:
    """The namespaces a namespaceSelector of one ``kubernetes.io/metadata.name NotIn`` expression leaves out."""
    assert set(selector) == {"matchExpressions"}, selector
    (expression,) = selector["matchExpressions"]
    assert expression["key"] == "kubernetes.io/metadata.name"
    assert expression["operator"] == "NotIn"
    return set(expression["values"])


# -- the builds -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_both_builds_agree(overlay: str) -> None:
    def key(obj: Obj) -> tuple[str, str, str, str]:
        return obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]

    ours = {key(obj): obj for obj in _build(overlay, "python")}
    theirs = {key(obj): obj for obj in _build(overlay, "kubectl")}
    assert ours.keys() == theirs.keys()
    for name, obj in ours.items():
        assert obj == theirs[name], name


def test_the_overlay_installs_everything_in_the_namespace(built: tuple[str, list[Obj]]) -> None:
    overlay, objects = built
    kinds = {obj["kind"] for obj in objects}
    assert kinds == INSTALL_KINDS | (CERT_MANAGER_KINDS if overlay == "cert-manager" else set())
    assert "Secret" not in kinds  # the serving key is never in the repository
    assert _one(objects, "Namespace")["metadata"]["name"] == NAMESPACE
    for obj in objects:
        expected = None if obj["kind"] in CLUSTER_KINDS else NAMESPACE
        if obj["metadata"]["name"] == POLICY_ROLE:
            expected = POLICY_NAMESPACE
        assert obj["metadata"].get("namespace") == expected, (obj["kind"], obj["metadata"]["name"])
        assert obj["metadata"]["labels"] == {
            "app.kubernetes.io/name": "desched",
            "app.kubernetes.io/component": "webhook",
        }


# -- the server -----------------------------------------------------------------------------------------------------


def test_the_deployment_is_highly_available_and_hardened(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    deployment = _deployment(objects)
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"] == {"matchLabels": labels}
    assert spec["replicas"] == 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0  # a rollout never drops below two replicas
    pod = spec["template"]["spec"]
    (term,) = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"] == {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": labels},
    }
    assert pod["serviceAccountName"] == "desched-webhook"
    assert pod["priorityClassName"] == "system-cluster-critical"  # policies fail closed: never preempted
    security = pod["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] != 0 and security["runAsGroup"] != 0
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    container = _container(objects)
    assert container["image"] == IMAGE
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    resources = container["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"} and "memory" in resources["limits"]
    # The key is readable by the server's group only, through the whole-Secret mount (a subPath never updates).
    (volume,) = pod["volumes"]
    assert volume["secret"] == {"secretName": SECRET, "defaultMode": 0o440}
    assert security["fsGroup"] == security["runAsGroup"]
    assert container["volumeMounts"] == [{"name": volume["name"], "mountPath": "/certs", "readOnly": True}]


def test_the_container_follows_the_command_line_contract(built: tuple[str, list[Obj]]) -> None:
    overlay, objects = built
    container = _container(objects)
    assert all(isinstance(arg, str) for arg in container["args"])
    flags = _flags(container["args"])
    assert REQUIRED_FLAGS <= set(flags) <= REQUIRED_FLAGS | OPTIONAL_FLAGS
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"https": int(flags["--port"]), "metrics": int(flags["--metrics-port"])}
    assert (flags["--host"], flags["--port"], flags["--metrics-port"]) == ("0.0.0.0", "8443", "9090")
    assert (flags["--tls-cert"], flags["--tls-key"]) == ("/certs/tls.crt", "/certs/tls.key")
    assert flags["--mode"] == ("warn" if overlay == "warn" else "enforce")
    assert re.fullmatch(r"[a-z0-9-]+/[a-z0-9.-]+", flags["--policy-configmap"])
    if "--deny" in flags:
        assert re.fullmatch(r"DS\d{3}(,DS\d{3})*", flags["--deny"])


def test_probes_use_the_metrics_port_paths(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    container = _container(objects)
    probes = {name: container[name]["httpGet"] for name in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes == {
        "startupProbe": {"path": "/healthz", "port": "metrics"},
        "livenessProbe": {"path": "/healthz", "port": "metrics"},
        "readinessProbe": {"path": "/readyz", "port": "metrics"},
    }


def test_shutdown_outlasts_the_pre_stop_sleep_and_the_longest_admission_call(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    pod = _deployment(objects)["spec"]["template"]["spec"]
    command = _container(objects)["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    longest_call = max(webhook["timeoutSeconds"] for webhook in _webhooks(objects).values())
    assert pod["terminationGracePeriodSeconds"] > int(command[1]) + longest_call


def test_the_service_maps_443_to_the_https_port_and_exposes_metrics(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    service = _one(objects, "Service", SERVICE)
    assert service["spec"]["selector"] == _deployment(objects)["spec"]["template"]["metadata"]["labels"]
    ports = {(port["port"], port["targetPort"]) for port in service["spec"]["ports"]}
    assert ports == {(443, "https"), (9090, "metrics")}


def test_the_pdb_selects_the_deployments_pods_and_allows_one_disruption(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    pdb = _one(objects, "PodDisruptionBudget")
    pod_labels = _deployment(objects)["spec"]["template"]["metadata"]["labels"]
    assert set(pdb["spec"]["selector"]) == {"matchLabels"}
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pdb["spec"]["minAvailable"] == _deployment(objects)["spec"]["replicas"] - 1
    assert pdb["metadata"]["namespace"] == _deployment(objects)["metadata"]["namespace"]


def test_the_network_policy_opens_8443_to_all_and_9090_to_monitoring(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    policy = _one(objects, "NetworkPolicy")["spec"]
    assert policy["podSelector"] == {"matchLabels": _deployment(objects)["spec"]["template"]["metadata"]["labels"]}
    assert policy["policyTypes"] == ["Ingress"]
    webhook, metrics = policy["ingress"]
    assert webhook == {"ports": [{"protocol": "TCP", "port": 8443}]}  # no `from`: the API server's address is unknown
    assert metrics["ports"] == [{"protocol": "TCP", "port": 9090}]
    (source,) = metrics["from"]
    assert set(source) == {"namespaceSelector"} and source["namespaceSelector"]["matchLabels"]


# -- RBAC -------------------------------------------------------------------------------------------------------------


def test_rbac_is_read_only_on_exactly_the_contracted_resources(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    role = _one(objects, "ClusterRole", "desched-webhook")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert all(set(rule) == {"apiGroups", "resources", "verbs"} for rule in role["rules"])  # no resourceNames, URLs
    assert granted == {(group, resource, verb) for group, resource in READS for verb in ("get", "list", "watch")}
    binding = _one(objects, "ClusterRoleBinding", "desched-webhook")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "desched-webhook",
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "desched-webhook", "namespace": NAMESPACE}]
    account = _one(objects, "ServiceAccount", "desched-webhook")
    assert account["automountServiceAccountToken"] is True  # it lists and watches through the API


def test_the_policy_configmap_is_the_only_configmap_it_can_read(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    assert _flags(_container(objects)["args"])["--policy-configmap"] == f"{POLICY_NAMESPACE}/{POLICY_NAME}"
    role = _one(objects, "Role", POLICY_ROLE)
    assert role["metadata"]["namespace"] == POLICY_NAMESPACE
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [POLICY_NAME],
            "verbs": ["get", "list", "watch"],
        }
    ]
    binding = _one(objects, "RoleBinding", POLICY_ROLE)
    assert binding["metadata"]["namespace"] == POLICY_NAMESPACE
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": POLICY_ROLE}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "desched-webhook", "namespace": NAMESPACE}]
    cluster_wide = [obj for obj in objects if obj["kind"] == "ClusterRole"]
    for rule in (rule for obj in cluster_wide for rule in obj["rules"]):
        assert "configmaps" not in rule["resources"] and "*" not in rule["resources"], rule


# -- the webhook configuration ----------------------------------------------------------------------------------------


def test_each_webhook_entry_is_complete(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    service = _one(objects, "Service", SERVICE)
    for name, webhook in _webhooks(objects).items():
        assert webhook["admissionReviewVersions"] == ["v1"], name
        assert webhook["sideEffects"] == "None", name
        assert webhook["failurePolicy"] in ("Fail", "Ignore"), name
        assert webhook["matchPolicy"] == "Equivalent", name
        assert 1 <= webhook["timeoutSeconds"] <= 10, name
        assert webhook["clientConfig"] == {
            "service": {
                "name": service["metadata"]["name"],
                "namespace": service["metadata"]["namespace"],
                "path": "/validate",
                "port": 443,
            }
        }, name
        assert "caBundle" not in webhook["clientConfig"]  # written in the cluster, never committed


def test_the_rules_cover_exactly_the_contracted_kinds_and_operations(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    webhooks = _webhooks(objects)
    assert set(webhooks) == set(RULES)
    for name, webhook in webhooks.items():
        covered = {
            (group, version, resource, operation)
            for rule in webhook["rules"]
            for group in rule["apiGroups"]
            for version in rule["apiVersions"]
            for resource in rule["resources"]
            for operation in rule["operations"]
        }
        assert covered == RULES[name], name
        assert all(rule["scope"] == "Namespaced" for rule in webhook["rules"]), name


def test_selectors_send_labelled_policies_and_spare_the_webhooks_namespace(built: tuple[str, list[Obj]]) -> None:
    _, objects = built
    webhooks = _webhooks(objects)
    policy_namespace = _flags(_container(objects)["args"])["--policy-configmap"].split("/")[0]
    assert webhooks["policies.desched.io"]["objectSelector"] == {"matchLabels": POLICY_LABEL}
    assert webhooks["wrappers.desched.io"]["objectSelector"] == {"matchLabels": POLICY_LABEL}
    assert "objectSelector" not in webhooks["kubedeschedulers.desched.io"]
    assert "objectSelector" not in webhooks["workloads.desched.io"]
    for name in POLICY_WEBHOOKS:
        # The descheduler's policy lives in kube-system: it must not be excluded from the policy webhooks.
        assert _excluded(webhooks[name]["namespaceSelector"]) == {NAMESPACE}, name
        assert policy_namespace not in _excluded(webhooks[name]["namespaceSelector"])
    assert _excluded(webhooks["workloads.desched.io"]["namespaceSelector"]) == {NAMESPACE, "kube-system"}


def test_policies_fail_closed_and_workloads_open_except_in_warn_mode(built: tuple[str, list[Obj]]) -> None:
    overlay, objects = built
    policies = {_webhooks(objects)[name]["failurePolicy"] for name in POLICY_WEBHOOKS}
    assert policies == ({"Ignore"} if overlay == "warn" else {"Fail"})
    assert _webhooks(objects)["workloads.desched.io"]["failurePolicy"] == "Ignore"


# -- certificates -----------------------------------------------------------------------------------------------------


def test_cert_manager_issues_the_mounted_secret_for_the_service_names() -> None:
    for builder in ("python", "kubectl") if shutil.which("kubectl") else ("python",):
        objects = _build("cert-manager", builder)
        service = _one(objects, "Service", SERVICE)
        host = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
        serving = _one(objects, "Certificate", "desched-webhook-tls")
        assert serving["spec"]["dnsNames"] == [host, f"{host}.cluster.local"]
        assert serving["spec"]["secretName"] == SECRET
        assert "server auth" in serving["spec"]["usages"]
        configuration = _one(objects, "ValidatingWebhookConfiguration", CONFIGURATION)
        assert configuration["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": f"{serving['metadata']['namespace']}/{serving['metadata']['name']}"
        }
        # The chain: the serving certificate's Issuer is a CA Issuer whose secret a CA Certificate from a self-signed
        # Issuer writes.
        issuers = {obj["metadata"]["name"]: obj["spec"] for obj in objects if obj["kind"] == "Issuer"}
        reference = serving["spec"]["issuerRef"]
        assert reference["kind"] == "Issuer" and reference["group"] == "cert-manager.io"
        ca_secret = issuers[reference["name"]]["ca"]["secretName"]
        (ca,) = [obj for obj in objects if obj["kind"] == "Certificate" and obj["spec"]["secretName"] == ca_secret]
        assert ca["spec"]["isCA"] is True
        assert issuers[ca["spec"]["issuerRef"]["name"]] == {"selfSigned": {}}


@pytest.mark.parametrize("overlay", ("self-signed", "warn"))
def test_the_self_signed_overlays_leave_the_ca_to_desched_certs(overlay: str) -> None:
    objects = _build(overlay, "python")
    configuration = _one(objects, "ValidatingWebhookConfiguration", CONFIGURATION)
    assert "annotations" not in configuration["metadata"]
    assert not [obj for obj in objects if obj["apiVersion"].startswith("cert-manager.io/")]


def test_no_key_material_is_committed() -> None:
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "PRIVATE KEY" not in text and "BEGIN CERTIFICATE" not in text, path
            assert "caBundle:" not in text, path
    ignored = (DEPLOY / ".gitignore").read_text().split()
    assert {"*.key", "secret.yaml"} <= set(ignored)


# -- the documentation ------------------------------------------------------------------------------------------------


def test_the_documented_commands_match_the_manifests() -> None:
    section = (ROOT / "docs" / "webhook.md").read_text()
    objects = _build("self-signed", "python")
    service = _one(objects, "Service", SERVICE)
    certs = re.search(r"desched certs (.+?)\n(?!\s)", section.replace("\\\n", " "))
    assert certs is not None
    words = certs.group(1).split()
    given = {
        flag: words[index + 1]
        for index, flag in enumerate(words)
        if flag.startswith("--") and index + 1 < len(words) and not words[index + 1].startswith("--")
    }
    assert given["--dns-name"] == f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert given["--secret"] == f"{NAMESPACE}/{SECRET}"
    assert given["--patch-webhook"] == CONFIGURATION
    assert "--apply" in words
    for overlay in ("self-signed", "cert-manager", "warn"):
        assert f"kubectl apply -k deploy/webhook/{overlay}" in section
    for name in _webhooks(objects):
        assert f"`{name}`" in section


# -- server-side validation -----------------------------------------------------------------------------------------


def _subset(sent: Any, stored: Any, where: str = "") -> list[str]:
    """Where ``sent`` is not kept in ``stored`` (fields the server dropped or changed; additions are fine)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [where]
        return [
            miss
            for key, value in sent.items()
            for miss in ([f"{where}.{key}"] if key not in stored else _subset(value, stored[key], f"{where}.{key}"))
        ]
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [where]
        return [miss for index, value in enumerate(sent) for miss in _subset(value, stored[index], f"{where}[{index}]")]
    return [] if sent == stored else [f"{where}: {sent!r} -> {stored!r}"]


@pytest.mark.cluster
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_api_server_accepts_every_object_and_keeps_every_field(overlay: str, kube: Any, namespace: str) -> None:
    from tests.kcp.api import ApiError

    checked, unserved = set(), set()
    for obj in _build(overlay, "python"):
        if obj["kind"] == "Namespace":
            continue  # the test's own namespace stands in for it
        # Into the test's namespace: a dry run still needs the namespace to exist.
        text = yaml.safe_dump(obj).replace(f"namespace: {NAMESPACE}", f"namespace: {namespace}")
        obj = yaml.safe_load(text)
        try:
            resource = kube.resource(obj["apiVersion"], obj["kind"])
        except ApiError:
            unserved.add(f"{obj['apiVersion']} {obj['kind']}")  # e.g. policy/v1 before 1.21, cert-manager's CRDs
            continue
        stored = kube.request("POST", resource.path(obj["metadata"].get("namespace")), obj, params={"dryRun": "All"})
        assert _subset(obj, stored) == [], obj["kind"]
        checked.add(obj["kind"])
    assert checked >= INSTALL_KINDS - {"Namespace", "PodDisruptionBudget"}, unserved
