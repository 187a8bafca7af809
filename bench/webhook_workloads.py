"""Workload admission at cluster scale (issue 23, item 8): the ``workloads.desched.io`` checks with a cache of 10,000
workloads and 2,000 PodDisruptionBudgets, on the real control plane, driven by wrk.

Setup: the test control plane (:mod:`tests.kcp`, Kubernetes 1.20 on loopback) holding ``--workloads`` workloads
(Deployments, ReplicaSets, Jobs and StatefulSets with pod templates, in 50 namespaces; no controller turns them into
pods) and ``--pdbs`` PodDisruptionBudgets (mostly ``matchLabels`` on one application, some with expressions, some
expressions only), and the active policy ConfigMap ``kube-system/descheduler`` (the executor's policy without the
PodsWithoutPDB protection, so every workload is in scope and the checks have findings to report). Then
``desched webhook --policy-configmap kube-system/descheduler --kubeconfig ...`` starts and is measured once its
``/readyz`` says the cache has synced, beside the no-op ``/validate`` of ``bench/webhook.py`` on the same stack.

Load (wrk, 50 keep-alive TLS connections, one thread): AdmissionReviews as the API server sends them, each body one
of 200 cycled in turn, built from the API server's own objects (a dry-run create for CREATE, the stored object and
a changed copy for UPDATE; managedFields and defaults included):
* ``deployments``: Deployment CREATE (new names) and UPDATE (a replica count changed), half each;
* ``pdbs``: PodDisruptionBudget CREATE (selecting existing workloads) and UPDATE (a budget changed), half each.

Per form, alternated with the no-op in every round (A B A B): ``saturated`` (closed loop: throughput, and the ratio
webhook/no-op, each server's CPU time per request, which a busy machine disturbs less, and the split of the webhook's
as ``bench/webhook.py`` makes it, against the no-op over TLS and over plain HTTP) and ``paced``
(exponential think times of mean ``--pace-ms`` per connection: the latency a client sees). Targets: throughput at
least 0.7 of the no-op's, p99 at most 5 ms paced. Beside them, the decision alone in this process (a cluster cache
filled from the server's listings): ms per decision with the index, and over every cached object as before it
(``--reference`` bodies per form). The load average at the start and the end tells how busy the machine was. Run
``python bench/webhook_workloads.py`` (about four minutes); ``--json PATH`` also writes the figures. Needs wrk and
the control plane (``python scripts/control-plane install``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.webhook import (  # noqa: E402
    _long_string,
    conclude,
    cpu_split,
    lua_post,
    split_text,
    start_noop,
    timed_wrk,
)
from tests.kcp import controlplane, install  # noqa: E402
from tests.kcp.api import Api, ApiError, Json  # noqa: E402
from tests.webhook.server import Running, start  # noqa: E402

NAMESPACES = 50
KINDS = ("Deployment", "Deployment", "ReplicaSet", "Job", "StatefulSet")
API_VERSIONS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}
RESOURCES = {"Deployment": "deployments", "PodDisruptionBudget": "poddisruptionbudgets"}
FORMS = ("deployments", "pdbs")
BODIES = 200  # distinct AdmissionReviews per form, cycled
TARGET_RATIO, TARGET_P99_MS = 0.7, 5.0
POLICY_CONFIGMAP = ("kube-system", "descheduler")
POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictPerNode: 5
profiles:
- name: default
  pluginConfig:
  - name: DefaultEvictor
    args:
      nodeFit: true
  - name: RemoveDuplicates
  - name: RemovePodsViolatingNodeTaints
  - name: RemovePodsViolatingInterPodAntiAffinity
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20, pods: 20}
      targetThresholds: {cpu: 50, memory: 50, pods: 50}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints, RemovePodsViolatingInterPodAntiAffinity]
    balance:
      enabled: [RemoveDuplicates, LowNodeUtilization]
"""


# -- the cluster -------------------------------------------------------------------------------------------------


def namespace_of(index: int) -> str:
    return f"bench-{index % NAMESPACES}"


def labels_of(index: int) -> dict[str, str]:
    return {"app": f"app-{index}", "tier": ("web", "api", "db")[index % 3], "team": f"team-{index % 17}"}


def workload(index: int, name: str | None = None) -> Json:
    """Workload ``index``: a Deployment, ReplicaSet, Job or StatefulSet with a pod template (``name``: another)."""
    kind = KINDS[index % len(KINDS)]
    labels = labels_of(index)
    pod: Json = {"containers": [{"name": "app", "image": f"registry.example/app:{index % 7}"}]}
    if index % 5 == 0:
        pod["volumes"] = [{"name": "cache", "emptyDir": {}}]
    spec: Json = {"template": {"metadata": {"labels": labels}, "spec": pod}}
    if kind == "Job":
        pod["restartPolicy"] = "Never"
    else:
        spec["selector"] = {"matchLabels": labels}
        spec["replicas"] = 1 + index % 4
    if kind == "StatefulSet":
        spec["serviceName"] = f"w-{index}"
    metadata = {"name": name or f"w-{index}", "namespace": namespace_of(index)}
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": metadata, "spec": spec}


def pdb(index: int, workloads: int, api_version: str, name: str | None = None) -> Json:
    """PDB ``index``, over the application of workload ``7 * index`` (most by ``matchLabels``)."""
    target = (index * 7) % workloads
    shape = index % 20
    selector: Json
    if shape < 16:
        selector = {"matchLabels": {"app": f"app-{target}"}}
    elif shape < 18:
        selector = {
            "matchLabels": {"app": f"app-{target}"},
            "matchExpressions": [{"key": "team", "operator": "Exists"}],
        }
    else:
        selector = {"matchExpressions": [{"key": "team", "operator": "In", "values": [f"team-{index % 17}"]}]}
    budget: Json = {"maxUnavailable": 1} if index % 2 else {"minAvailable": "50%"}
    metadata = {"name": name or f"pdb-{index}", "namespace": namespace_of(target)}
    return {
        "apiVersion": api_version,
        "kind": "PodDisruptionBudget",
        "metadata": metadata,
        "spec": {**budget, "selector": selector},
    }


def populate(api: Api, workloads: int, pdbs: int) -> float:
    """The namespaces, workloads, PDBs and the active policy ConfigMap, created in parallel; seconds taken."""
    started = time.perf_counter()
    version = api.pdb_version()
    for index in range(NAMESPACES):
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace_of(index)}})
    objects = [workload(index) for index in range(workloads)] + [
        pdb(index, workloads, version) for index in range(pdbs)
    ]
    with ThreadPoolExecutor(16) as creators:
        list(creators.map(api.create, objects))
    namespace, name = POLICY_CONFIGMAP
    metadata = {"name": name, "namespace": namespace, "labels": {"desched.io/policy": "true"}}
    api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"policy.yaml": POLICY}})
    return time.perf_counter() - started


# -- the AdmissionReviews --------------------------------------------------------------------------------------


def review(kind: str, operation: str, obj: Json, old: Json | None) -> str:
    """An AdmissionReview v1 as the API server sends it for ``obj`` (``old`` on UPDATE)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    kind_ref = {"group": group, "version": version, "kind": kind}
    resource = {"group": group, "version": version, "resource": RESOURCES[kind]}
    options = "CreateOptions" if operation == "CREATE" else "UpdateOptions"
    request = {
        "uid": str(uuid.uuid4()),
        "kind": kind_ref,
        "resource": resource,
        "requestKind": kind_ref,
        "requestResource": resource,
        "name": obj["metadata"]["name"],
        "namespace": obj["metadata"]["namespace"],
        "operation": operation,
        "userInfo": {
            "username": "system:serviceaccount:flux-system:kustomize-controller",
            "groups": ["system:serviceaccounts"],
        },
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": options},
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def dry_run_create(api: Api, obj: Json) -> Json:
    """``obj`` as the API server admits it on create: defaulted, with uid, timestamps and managedFields."""
    resource = api.resource(obj["apiVersion"], obj["kind"])
    return api.request("POST", resource.path(obj["metadata"]["namespace"]), obj, params={"dryRun": "All"})


def stored(api: Api, obj: Json) -> Json:
    found = api.get(obj["apiVersion"], obj["kind"], obj["metadata"]["name"], obj["metadata"]["namespace"])
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], **found}


def changed(old: Json, change: Json) -> Json:
    """An update of ``old``: ``change`` merged into its spec, the generation counted up."""
    new = copy.deepcopy(old)
    new["spec"].update(change)
    new["metadata"]["generation"] = int(new["metadata"].get("generation", 1)) + 1
    return new


def bodies(api: Api, form: str, workloads: int, pdbs: int) -> list[str]:
    """``BODIES`` AdmissionReviews of ``form``, CREATE and UPDATE alternating."""
    found: list[str] = []
    version = api.pdb_version()
    deployments = [index for index in range(workloads) if KINDS[index % len(KINDS)] == "Deployment"]
    for number in range(BODIES // 2):
        if form == "deployments":
            index = deployments[(number * 97) % len(deployments)]
            created = dry_run_create(api, workload(index, name=f"new-{index}"))
            found.append(review("Deployment", "CREATE", created, None))
            old = stored(api, workload(index))
            found.append(review("Deployment", "UPDATE", changed(old, {"replicas": old["spec"]["replicas"] + 1}), old))
        else:
            index = (number * 37) % pdbs
            created = dry_run_create(api, pdb(index, workloads, version, name=f"new-pdb-{index}"))
            found.append(review("PodDisruptionBudget", "CREATE", created, None))
            old = stored(api, pdb(index, workloads, version))
            budget = {"maxUnavailable": 2} if "maxUnavailable" in old["spec"] else {"minAvailable": "60%"}
            found.append(review("PodDisruptionBudget", "UPDATE", changed(old, budget), old))
    return found


def wrk_script(texts: list[str], pace_ms: int | None) -> str:
    """A wrk Lua script posting ``texts`` in turn, paced (exponential think times of mean ``pace_ms``) or not."""
    lines = ["local bodies = {", *(f"  {_long_string(text)}," for text in texts), "}", "local n = 0"]
    lines += ["request = function()", "  n = n % #bodies + 1", "  return wrk.format(nil, nil, nil, bodies[n])", "end"]
    return lua_post(lines, pace_ms)


# -- measuring -------------------------------------------------------------------------------------------------


def sample(webhook: Running, texts: list[str]) -> dict[str, Any]:
    """Each body once, on its own connection: how many answers allow, carry warnings, and a warning seen."""
    answers = [webhook.post(text.encode())[1] for text in texts]
    warned = [answer for answer in answers if answer.get("warnings")]
    return {
        "allowed": sum(bool(answer["allowed"]) for answer in answers),
        "with_warnings": len(warned),
        "example": warned[0]["warnings"][0] if warned else "",
        "unchecked": sum("not checked" in json.dumps(answer) for answer in answers),
    }


def decision_costs(api: Api, texts: dict[str, list[str]], reference: int) -> dict[str, dict[str, float]]:
    """The decision alone, in this process, on a cluster cache filled from the API server's listings: ms per
    decision of each form's bodies, indexed (each body 5 times) and over every cached object (``reference`` bodies
    once, the decision before the index)."""
    from desched.linter.engine import Settings
    from desched.runtime.kube import KubeClient
    from desched.webhook import workloads
    from desched.webhook.decision import Options
    from desched.webhook.review import decide, parse_review
    from desched.webhook.state import KINDS, ClusterCache

    cache = ClusterCache(cast(KubeClient, None), POLICY_CONFIGMAP, Settings())
    for kind, versions in KINDS:
        for version in versions:
            try:
                items = api.list(version, kind)
            except ApiError:
                continue  # not served at this version
            for item in items:
                cache.apply(kind, "ADDED", {"apiVersion": version, **item})
            break
    namespace, name = POLICY_CONFIGMAP
    cache.apply_policy("ADDED", api.get("v1", "ConfigMap", name, namespace))
    costs = {}
    for form, found in texts.items():
        requests = [parse_review(text.encode()) for text in found]
        indexed = []
        for request in requests * 5:
            started = time.perf_counter()
            decide(request, Options(), cache)
            indexed.append((time.perf_counter() - started) * 1000)
        full = []
        for request in requests[:reference]:
            obj, old, kind = request["object"], request["oldObject"], request["kind"]["kind"]
            started = time.perf_counter()
            if kind == "PodDisruptionBudget":
                workloads.pdb_decision("u", kind, request["operation"], obj, old, Options(), cache, reference=True)
            else:
                workloads.workload_decision("u", kind, obj, Options(), cache, reference=True)
            full.append((time.perf_counter() - started) * 1000)
        indexed.sort()
        costs[form] = {
            "indexed_p50_ms": indexed[len(indexed) // 2],
            "indexed_p99_ms": indexed[int(0.99 * len(indexed))],
            "reference_ms": statistics.median(full),
        }
    return costs


def measure(args: argparse.Namespace) -> dict[str, Any]:
    installation = install.find()
    if installation is None:
        reason = install.last_failure() or "run python scripts/control-plane install"
        raise SystemExit(f"no Kubernetes control plane installed: {reason}")
    controlplane.sweep()
    load = os.getloadavg()[0]
    plane = controlplane.up(installation, controllers=("namespace",), tied_to_parent=True)
    runs: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    try:
        api = plane.api(pool_size=16)
        populated = populate(api, args.workloads, args.pdbs)
        print(f"created {args.workloads:,} workloads and {args.pdbs:,} PDBs in {populated:.1f} s", flush=True)
        texts = {form: bodies(api, form, args.workloads, args.pdbs) for form in FORMS}
        costs = decision_costs(api, texts, args.reference)
        with tempfile.TemporaryDirectory() as work:
            scripts: dict[tuple[str, str], Path] = {}
            for form in FORMS:
                for mode, pace in (("saturated", None), ("paced", args.pace_ms)):
                    scripts[mode, form] = Path(work, f"{mode}-{form}.lua")
                    scripts[mode, form].write_text(wrk_script(texts[form], pace))
            started = time.perf_counter()
            webhook = start(
                Path(work, "webhook"),
                "--stage-times",
                "--policy-configmap",
                "/".join(POLICY_CONFIGMAP),
                "--kubeconfig",
                plane.kubeconfig,
                timeout=600,
            )
            synced = time.perf_counter() - started
            print(f"desched webhook ready (cache synced) in {synced:.1f} s", flush=True)
            noop, plain = start_noop(Path(work, "noop")), start_noop(Path(work, "plain"), "http")
            servers = {"webhook": (webhook, "https"), "no-op": (noop, "https"), "no-op-http": (plain, "http")}
            try:
                samples = {form: sample(webhook, texts[form]) for form in FORMS}
                for _ in range(args.rounds):
                    for mode in ("saturated", "paced"):
                        for form in FORMS:
                            for name, (server, scheme) in servers.items():
                                if mode == "paced" and name == "no-op-http":
                                    continue  # only for the CPU split
                                script, stages = scripts[mode, form], name == "webhook"
                                figures = timed_wrk(server, script, args.connections, args.seconds, scheme, stages)
                                runs.setdefault((mode, name, form), []).append(figures)
                rss = _rss(webhook.process.pid)
            finally:
                for server, _ in servers.values():
                    server.stop()
    finally:
        plane.stop()
    medians = {
        f"{mode}/{name}/{form}": {key: statistics.median(run[key] for run in found) for key in found[0]}
        for (mode, name, form), found in runs.items()
    }
    targets, splits = {}, {}
    for form in FORMS:
        splits[form] = cpu_split(*(medians[f"saturated/{name}/{form}"] for name in ("webhook", "no-op", "no-op-http")))
        ratio = medians[f"saturated/webhook/{form}"]["rps"] / medians[f"saturated/no-op/{form}"]["rps"]
        p99 = medians[f"paced/webhook/{form}"]["p99_ms"]
        for name, value, text, met in (
            (
                "throughput",
                ratio,
                f"webhook/no-op throughput, {form}: {ratio:.2f} (target >= {TARGET_RATIO})",
                ratio >= TARGET_RATIO,
            ),
            (
                "p99",
                p99,
                f"webhook p99 paced, {form}: {p99:.1f} ms (target <= {TARGET_P99_MS:g})",
                p99 <= TARGET_P99_MS,
            ),
        ):
            targets[f"{name}/{form}"] = {"value": value, "text": text, "met": met}
    return {
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "server": f"kube-apiserver from Debian {installation.version}",
        "workloads": args.workloads,
        "pdbs": args.pdbs,
        "connections": args.connections,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "pace_ms": args.pace_ms,
        "populate_s": populated,
        "synced_s": synced,
        "webhook_rss_bytes": rss,
        "samples": samples,
        "decision_ms": costs,
        "load_average": [load, os.getloadavg()[0]],  # at the start and the end: other work on the machine
        "medians": medians,
        "cpu_split": splits,
        "targets": targets,
    }


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--pdbs", type=int, default=2_000)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0, help="per run (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds; medians are reported (default 3)")
    parser.add_argument("--pace-ms", type=int, default=100, help="paced mode: ms between requests per connection")
    parser.add_argument("--reference", type=int, default=2, help="bodies per form decided without the index")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("bench/webhook_workloads.py needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    result = measure(args)
    print(
        f"machine: {result['machine']}; {result['server']}; {args.workloads:,} workloads, {args.pdbs:,} PDBs cached; "
        f"wrk -t1 -c{args.connections}; medians of {args.rounds} alternated rounds of {args.seconds:g} s"
    )
    print(f"cache synced in {result['synced_s']:.1f} s; webhook RSS {result['webhook_rss_bytes'] / 2**20:.0f} MiB")
    for form, found in result["samples"].items():
        print(
            f"{form}: {found['with_warnings']} of {BODIES} answers warn ({found['unchecked']} not checked), "
            f"e.g. {found['example'][:100]!r}"
        )
    medians = result["medians"]
    for form in FORMS:
        ours, noop = medians[f"saturated/webhook/{form}"], medians[f"saturated/no-op/{form}"]
        paced, idle = medians[f"paced/webhook/{form}"], medians[f"paced/no-op/{form}"]
        cost = result["decision_ms"][form]
        print(
            f"{form}: saturated {ours['rps']:,.0f} req/s (no-op {noop['rps']:,.0f}), CPU {ours['cpu_ms']:.2f} ms a "
            f"request (no-op {noop['cpu_ms']:.2f}); paced p50 {paced['p50_ms']:.1f} "
            f"ms, p99 {paced['p99_ms']:.1f} ms (no-op p99 {idle['p99_ms']:.1f}); one decision "
            f"{cost['indexed_p50_ms']:.2f} ms (p99 {cost['indexed_p99_ms']:.2f}), without the index "
            f"{cost['reference_ms']:,.0f} ms"
        )
        print(f"webhook CPU split, {form}: {split_text(result['cpu_split'][form])}")
    return conclude(result, args.json)


if __name__ == "__main__":
    sys.exit(main())
