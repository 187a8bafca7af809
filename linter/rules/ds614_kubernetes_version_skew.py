"""DS614: a descheduler image built for a Kubernetes version far from the cluster's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit
from desched.linter.rules._deployment_examples import runner

if TYPE_CHECKING:
    from desched.deployment.repository import Runs
    from desched.deployment.runs import DeschedulerRun
    from desched.versions import KubernetesVersion

ID = "DS614"
NAME = "kubernetes-version-skew"
SEVERITY = "warning"
SEVERITY_NOTE = "error for an image from v0.25 on (policy/v1 Eviction) on a cluster before 1.22"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
ADMISSION = True  # the webhook applies it to an admitted descheduler workload: it reads that object alone
PATCH_READS = frozenset({"image"})  # what a remote base's patch must set to be judged
SUMMARY = "Descheduler image built for a Kubernetes version far from the cluster's"
RATIONALE = (
    "Descheduler v0.NN is built with the client libraries of Kubernetes 1.NN and supported within 3 minors of it "
    "(upstream README, Compatibility Matrix): further apart, it logs at start-up that it may not be supported and "
    "may call APIs the cluster does not serve. From v0.25 it evicts through the policy/v1 Eviction API, which "
    "Kubernetes serves from 1.22: on an older cluster every eviction fails (upstream issue #1140). desched cannot "
    "tell the cluster's version from the files: the rule runs when `kubernetes-version` in `.desched.yaml` or "
    "`--kubernetes-version` names it."
)
REMEDIATION = (
    "Run the descheduler release of the cluster's minor (v0.NN for Kubernetes 1.NN), or one within 3 minors of it."
)
EXAMPLES = {
    "pass": [
        (runner("CronJob"), None, "1.36"),
        (runner("CronJob"), None, "1.33"),
        (runner("CronJob").replace("v0.36.0", "v0.24.2"), None, "1.21"),
    ],
    "fail": [(runner("CronJob"), None, "1.30"), (runner("CronJob").replace("v0.36.0", "v0.25.0"), None, "1.21")],
}

# Upstream kubernetes-sigs/descheduler, v0.36.0 unless said otherwise:
#: From v0.18 on, descheduler v0.NN is built with the client packages of Kubernetes 1.NN (README.md, "Compatibility
#: Matrix"); older releases follow no such rule (v0.10 is built for 1.17) and are not judged.
_MATCHING_FROM = 18
#: pkg/descheduler/descheduler.go, validateVersionCompatibility: ``math.Abs(deschedulerMinor-kubeServerMinor) > 3``
#: is logged as a warning at start-up, the run goes on (from v0.27.0, upstream commit 7068fc608). Since v0.31.0 the
#: descheduler's minor is read as the float "NN.P" (v0.35.1 is 35.1), so a patch release exactly 3 minors ahead of the
#: cluster warns too; desched judges minors, as the compatibility matrix and upstream's own tests of the check do.
_SKEW = 3
_WARNS_FROM = 27
#: pkg/descheduler/evictions/evictions.go: v0.25.0 evicts through ``PolicyV1().Evictions`` (v0.24 through
#: ``PolicyV1beta1``), with the policy/v1 Eviction kind; Kubernetes serves policy/v1 Eviction from 1.22.
_POLICY_V1_FROM = 25
_EVICTION_V1_SERVED_FROM = 22


def check(runs: Runs) -> Iterator[RepoHit]:
    cluster = runs.kubernetes
    if cluster is None:
        return  # the cluster's version is the configuration's: without it there is nothing to compare
    for run in runs:
        if run.program != "descheduler":
            continue  # desched's executor names no Eviction version and checks none: any server takes it
        minor = run.release_minor
        if minor is None:
            continue  # no release in the tag: DS616's
        message = _message(run, minor, cluster)
        if message is not None:
            severity, text = message
            yield RepoHit(*run.where((*run.container, "image")), text, run.label, severity)


def _message(run: DeschedulerRun, minor: int, cluster: KubernetesVersion) -> tuple[str | None, str] | None:
    """(severity, message) of ``run``'s image against ``cluster``, or ``None`` when they fit."""
    release = f"image {run.image} runs descheduler v0.{minor}"
    seen = f"Kubernetes {cluster.text} ({cluster.source})"
    built = f"v0.{cluster.minor}" if cluster.minor >= _MATCHING_FROM else "a release"
    if minor >= _POLICY_V1_FROM and cluster.minor < _EVICTION_V1_SERVED_FROM:
        return "error", (
            f"{release}, which evicts through the policy/v1 Eviction API (from v0.25), but {seen} serves it from "
            f"1.22 on only: every eviction fails; run descheduler {built}, built for the cluster's minor, or "
            "upgrade the cluster"
        )
    skew = abs(minor - cluster.minor)
    if minor < _MATCHING_FROM or skew <= _SKEW:
        return None
    way = "ahead of" if minor > cluster.minor else "behind"
    logged = " (the descheduler logs that it may not be supported)" if minor >= _WARNS_FROM else ""
    return None, (
        f"{release}, built for Kubernetes 1.{minor}: {skew} minors {way} {seen}, past the 3 upstream supports"
        f"{logged}; run descheduler {built}, built for the cluster's minor, or one within 3 minors of it"
    )
