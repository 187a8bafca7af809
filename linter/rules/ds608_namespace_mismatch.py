"""DS608: the descheduler's workload, its ServiceAccount, its policy ConfigMap and its RoleBindings in different
namespaces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from desched.gitops.wrappers import object_label
from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner
from desched.reading.yamlsrc import YMap, locate
from desched.tree import list_or_empty, mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.repository import Runs
    from desched.deployment.runs import DeschedulerRun

ID = "DS608"
NAME = "namespace-mismatch"
SEVERITY = "error"
SEVERITY_NOTE = "warning for a RoleBinding of the account without a namespace"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "Descheduler workload, ServiceAccount, policy ConfigMap or RoleBinding in different namespaces"
RATIONALE = (
    "A pod runs as a ServiceAccount and mounts ConfigMaps of its own namespace only. After kustomize (whose "
    "`namespace:` overrides what each object says) a descheduler in kube-system whose ServiceAccount or policy "
    "ConfigMap is in another namespace never starts: `serviceaccount not found`, or `MountVolume.SetUp failed ... "
    "configmap not found` (upstream issue #765). A RoleBinding without a namespace is created wherever it is applied "
    "(the context's namespace): upstream's own kubernetes/base binds the secrets Role that way, so the grant lands "
    "away from the descheduler (a warning)."
)
REMEDIATION = (
    "Put the workload, its ServiceAccount and its policy ConfigMap in one namespace (a kustomization `namespace:` "
    "does it for all), and give a RoleBinding the namespace its grant is meant for."
)
_ACCOUNT = "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: descheduler, namespace: kube-system}\n"
_POLICY = (
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler-policy, namespace: kube-system}\n"
    "data:\n  policy.yaml: |\n    apiVersion: descheduler/v1alpha2\n    kind: DeschedulerPolicy\n    profiles: []\n"
)
_BINDING = (
    "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: descheduler-secrets}\n"
    "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: descheduler-secrets}\n"
    "subjects: [{kind: ServiceAccount, name: descheduler, namespace: kube-system}]\n"
)
EXAMPLES = {
    "pass": [runner("CronJob") + _ACCOUNT + _POLICY],
    "fail": [
        runner("CronJob") + _ACCOUNT.replace("kube-system", "descheduler") + _POLICY,
        runner("CronJob") + _ACCOUNT + _POLICY.replace("namespace: kube-system", "namespace: default"),
        runner("CronJob") + _ACCOUNT + _POLICY + _BINDING,
    ],
}


def check(runs: Runs) -> Iterator[RepoHit]:
    for run in runs:
        if run.locator is not None:
            continue  # the chart puts everything it renders in the release's namespace
        here = runs.namespaces_of(run.file, run.document)
        pod = run.container[:-2]
        accounts = _named(runs, "ServiceAccount", run.service_account)
        hit = _apart(runs, run, here, accounts, f"ServiceAccount {run.service_account}", "serviceaccount not found")
        if hit is not None:
            yield RepoHit(*run.where_field((*pod, "serviceAccountName"), instead=pod), hit, run.label)
        for name, path in _policy_volumes(run):
            configmaps = _named(runs, "ConfigMap", name)
            hit = _apart(runs, run, here, configmaps, f"policy ConfigMap {name}", "MountVolume.SetUp failed")
            if hit is not None:
                yield RepoHit(*run.where(path), hit, run.label)
        yield from _unplaced_bindings(runs, run, here)


def _named(runs: Runs, kind: str, name: str) -> list[tuple[str, Any]]:
    return [
        (file, doc)
        for file, doc in runs.named
        if doc.get("kind") == kind and mapping_or_empty(doc.get("metadata")).get("name") == name
    ]


def _apart(
    runs: Runs, run: DeschedulerRun, here: frozenset[str | None], found: list[tuple[str, Any]], what: str, fails: str
) -> str | None:
    """Why the workload cannot use ``found`` (the objects named like the one it names), or ``None``: they are not
    in the repository, one of them may share its namespace, or the workload's namespace is unknown while theirs is
    too."""
    if not found:
        return None
    there = frozenset().union(*(runs.namespaces_of(file, doc) for file, doc in found))
    if None in there or not here.isdisjoint(there):
        return None
    theirs = ", ".join(sorted(str(namespace) for namespace in there))
    if None in here:
        return (
            f"{run.kind} {run.name} has no namespace (after kustomize) while its {what} is in {theirs}: it runs "
            f"wherever it is applied, and anywhere else the pod never starts ({fails}); give it that namespace"
        )
    mine = ", ".join(sorted(str(namespace) for namespace in here))
    return (
        f"{run.kind} {run.name} is in {mine} (after kustomize), its {what} in {theirs}: a pod uses its own "
        f"namespace's only, so it never starts ({fails}); put them in one namespace"
    )


def _policy_volumes(run: DeschedulerRun) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """The ConfigMaps ``--policy-config-file`` resolves to, with the path of each volume's ``configMap`` name."""
    names = {name for name, _ in run.policy_keys}
    volumes = run.pod.get("volumes")
    pod = run.container[:-2]
    for index, volume in enumerate(list_or_empty(volumes)):
        name = mapping_or_empty(mapping_or_empty(volume).get("configMap")).get("name")
        if isinstance(name, str) and name in names:
            yield name, (*pod, "volumes", index, "configMap", "name")


def _unplaced_bindings(runs: Runs, run: DeschedulerRun, here: frozenset[str | None]) -> Iterator[RepoHit]:
    """A RoleBinding of the workload's ServiceAccount with no namespace (after kustomize), when the workload has
    one: it is created in whatever namespace it is applied to."""
    if None in here:
        return
    for file, doc in runs.named:
        if doc.get("kind") != "RoleBinding" or runs.namespaces_of(file, doc) != frozenset({None}):
            continue
        subjects = doc.get("subjects")
        if not any(_is_account(subject, run.service_account, here) for subject in list_or_empty(subjects)):
            continue
        role = mapping_or_empty(doc.get("roleRef"))
        position = locate(doc, ("metadata", "name"), key=True) if isinstance(doc, YMap) else None
        line, column = position or (1, 1)
        yield RepoHit(
            file, line, column,
            f"RoleBinding {mapping_or_empty(doc.get('metadata')).get('name')} of ServiceAccount "
            f"{run.service_account} has no namespace (after kustomize): it is created in the namespace it is "
            f"applied to, and grants {role.get('kind', 'Role')} {role.get('name')} there only, not where the "
            "descheduler needs it; give it (and its Role) a namespace",
            object_label(doc, "RoleBinding"),
            "warning",
        )  # fmt: skip


def _is_account(subject: Any, account: str, here: frozenset[str | None]) -> bool:
    subject = mapping_or_empty(subject)
    namespace = subject.get("namespace")
    return (
        subject.get("kind") == "ServiceAccount"
        and subject.get("name") == account
        and (not isinstance(namespace, str) or namespace in here)
    )
