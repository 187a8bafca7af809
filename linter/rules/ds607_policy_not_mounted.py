"""DS607: --policy-config-file missing, or not on any mounted volume."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner
from desched.tree import list_or_empty, mapping_or_empty

if TYPE_CHECKING:
    from desched.deployment.repository import Runs
    from desched.deployment.runs import DeschedulerRun

ID = "DS607"
NAME = "policy-not-mounted"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
SUMMARY = "--policy-config-file missing, or on no mounted volume"
RATIONALE = (
    "The descheduler reads its policy from `--policy-config-file`. Without the flag it has no policy and fails "
    '("deschedulerPolicy is nil", upstream issues #765, #794); a path under none of the container\'s volume mounts '
    "is a file that does not exist in the image, and the descheduler fails to read it at start-up."
)
REMEDIATION = "Mount the policy ConfigMap and point --policy-config-file at the file inside the mount."
_VOLUME = "volumes:\n- name: policy\n  configMap: {name: descheduler-policy}\n"
_SUB_PATH = "volumeMounts:\n- {name: policy, mountPath: /policy/policy.yaml, subPath: policy.yaml}\n"
_WRONG_KEY = (
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler-policy, namespace: kube-system}\n"
    "data:\n  policy.yml: |\n    apiVersion: descheduler/v1alpha2\n    kind: DeschedulerPolicy\n    profiles: []\n"
)
EXAMPLES = {
    "pass": [
        runner("CronJob"),
        runner("CronJob", container=_SUB_PATH, pod=_VOLUME, mounted=False),
        runner("CronJob") + _WRONG_KEY.replace("policy.yml", "policy.yaml"),
    ],
    "fail": [
        runner("CronJob", mounted=False),
        runner(
            "CronJob",
            container=_SUB_PATH.replace("/policy/policy.yaml", "/etc/policy.yaml"),
            pod=_VOLUME,
            mounted=False,
        ),
        runner("CronJob").replace("- --policy-config-file=/policy/policy.yaml", "- --v=3"),
        runner("CronJob") + _WRONG_KEY,
    ],
}


def check(runs: Runs) -> Iterator[RepoHit]:
    for run in runs:
        flag = run.flags.get("policy-config-file")
        if flag is None or not flag.value:
            yield RepoHit(
                *run.at_flag("policy-config-file"),
                'no --policy-config-file: the descheduler has no policy and fails ("deschedulerPolicy is nil"); '
                "mount the policy ConfigMap and point --policy-config-file at it",
                run.label,
            )
        elif not _mounted(run, flag.value):
            yield RepoHit(
                *run.at_flag("policy-config-file"),
                f"--policy-config-file {flag.value} is under none of the container's volume mounts: the file does "
                "not exist and the descheduler fails to read it; mount the policy ConfigMap there",
                run.label,
            )
        elif run.locator is None and (missing := _missing_key(runs, run)) is not None:
            yield RepoHit(*run.at_flag("policy-config-file"), missing, run.label)


def _missing_key(runs: Runs, run: DeschedulerRun) -> str | None:
    """Why the file ``--policy-config-file`` names is missing from the ConfigMap mounted there, when the repository
    holds that ConfigMap (written, or made by a kustomize configMapGenerator) and none of its keys is the file."""
    wanted = run.policy_keys
    held = {(name, key): runs.configmap_keys(name, run.namespace) for name, key in wanted}
    if not held or any(keys is None or key in keys for (_, key), keys in held.items()):
        return None  # no volume resolves it, a ConfigMap the repository does not hold, or the key is there
    (name, key), keys = next(iter(held.items()))
    shown = ", ".join(sorted(keys or ())) or "none"
    return (
        f"--policy-config-file is key {key} of ConfigMap {name}, which has no such key (its keys: {shown}): the "
        "file does not exist and the descheduler fails to read its policy; name the key the policy is under"
    )


def _mounted(run: DeschedulerRun, path: str) -> bool:
    """Whether ``path`` lies on a volume mount of the container (exactly, for a ``subPath`` mount)."""
    mounts = run.container_spec.get("volumeMounts")
    for mount in map(mapping_or_empty, list_or_empty(mounts)):
        at = mount.get("mountPath")
        if not isinstance(at, str) or not at:
            continue
        at = posixpath.normpath(at)
        if mount.get("subPath"):
            if posixpath.normpath(path) == at:
                return True
        elif posixpath.normpath(path).startswith(at.rstrip("/") + "/"):
            return True
    return False
