"""The descheduler Helm chart (charts/descheduler of kubernetes-sigs/descheduler), as data: the release each chart
version deploys, the top-level values each release's chart reads and every name the chart has had. What each chart
version's ConfigMap template makes of its values (its default policy, the apiVersion it writes) is
:mod:`desched.chart.versions`, imported only where chart values are (docs/helm-chart.md).

Every table was read off the chart at each ``descheduler-helm-chart-<version>`` tag (0.19.0 to 0.36.0 for the
policy data): ``name``, ``appVersion`` and ``deprecated`` of ``Chart.yaml``; the top-level keys of ``values.yaml``
together with every ``.Values.<key>`` its templates use (some, such as ``timeZone``, are read by the templates but
only commented in ``values.yaml``); the ``deschedulerPolicy`` and ``deschedulerPolicyAPIVersion`` entries of
``values.yaml``, written here as Python literals in the file's order; and ``templates/configmap.yaml``.
"""

from __future__ import annotations

__all__ = ["APP_VERSIONS", "CHART_NAMES", "FIRST_RELEASE", "LAST_RELEASE", "chart_version", "values_keys"]

#: The descheduler chart's versions and the release each deploys (``appVersion`` of charts/descheduler/Chart.yaml
#: at each ``descheduler-helm-chart-*`` tag of kubernetes-sigs/descheduler).
APP_VERSIONS: dict[str, str] = {
    "0.18.0": "0.18.0", "0.18.1": "0.18.0", "0.18.2": "0.18.0", "0.18.3": "0.18.0", "0.18.999": "0.18.0",
    "0.19.0": "0.19.0", "0.19.1": "0.19.0", "0.19.2": "0.19.0",
    "0.20.0": "0.20.0", "0.21.0": "0.21.0", "0.22.0": "0.22.0", "0.22.1": "0.22.1",
    "0.23.0": "0.23.0", "0.23.1": "0.23.0", "0.23.2": "0.23.1",
    "0.24.0": "0.24.0", "0.24.1": "0.24.1", "0.25.0": "0.25.0", "0.25.1": "0.25.1", "0.25.2": "0.25.1",
    "0.26.0": "0.26.0", "0.26.1": "0.26.1", "0.27.0": "0.27.0", "0.27.1": "0.27.1", "0.28.0": "0.28.0",
    "0.28.1": "0.28.1", "0.29.0": "0.29.0", "0.30.0": "0.30.0", "0.30.1": "0.30.1", "0.30.2": "0.30.2",
    "0.31.0": "0.31.0", "0.32.0": "0.32.0", "0.32.1": "0.32.1", "0.32.2": "0.32.2", "0.33.0": "0.33.0",
    "0.34.0": "0.34.0", "0.35.0": "0.35.0", "0.35.1": "0.35.1", "0.36.0": "0.36.0",
}  # fmt: skip

#: The releases whose chart values desched knows.
FIRST_RELEASE, LAST_RELEASE = 20, 36

# Each top-level value the chart reads: the first and last release whose chart reads it.
_VALUES: dict[str, tuple[int, int]] = {
    "activeDeadlineSeconds": (34, 36), "affinity": (23, 36), "annotations": (34, 34),
    "automountServiceAccountToken": (34, 36), "cmdOptions": (20, 36), "command": (28, 36), "commonLabels": (23, 36),
    "cronJobAnnotations": (34, 36), "cronJobApiVersion": (21, 36), "cronJobLabels": (34, 36),
    "deploymentAnnotations": (34, 36), "deschedulerPolicy": (20, 36), "deschedulerPolicyAPIVersion": (27, 36),
    "deschedulingInterval": (22, 36), "dnsConfig": (28, 36), "extraServiceAccountVolumeMounts": (34, 36),
    "extraServiceAccountVolumes": (34, 36), "failedJobsHistoryLimit": (20, 36), "fullnameOverride": (20, 36),
    "image": (20, 36), "imagePullSecrets": (22, 36), "initContainers": (35, 36), "jobAnnotations": (34, 36),
    "jobLabels": (34, 36), "kind": (22, 36), "leaderElection": (24, 36), "livenessProbe": (23, 36),
    "nameOverride": (20, 36), "namespaceOverride": (31, 36), "nodeSelector": (21, 36), "podAnnotations": (20, 36),
    "podLabels": (20, 36), "podSecurityContext": (29, 36), "podSecurityPolicy": (20, 24), "ports": (32, 36),
    "priorityClassName": (20, 36), "rbac": (20, 36), "replicas": (24, 36), "resources": (20, 36),
    "schedule": (20, 36), "securityContext": (27, 36), "service": (24, 36), "serviceAccount": (20, 36),
    "serviceMonitor": (24, 36), "startingDeadlineSeconds": (20, 36), "successfulJobsHistoryLimit": (20, 36),
    "suspend": (23, 36), "timeZone": (28, 36), "tolerations": (22, 36), "topologySpreadConstraints": (30, 36),
    "ttlSecondsAfterFinished": (26, 36),
    "global": (20, 36),  # Helm's own: every chart may read .Values.global
}  # fmt: skip


def values_keys(release: int) -> frozenset[str]:
    """The top-level values the chart of ``release`` (a minor; clamped to the releases known) reads."""
    minor = min(max(release, FIRST_RELEASE), LAST_RELEASE)
    return frozenset(key for key, (first, last) in _VALUES.items() if first <= minor <= last)


#: Every name the chart has had in ``Chart.yaml``: ``descheduler-helm-chart`` up to chart 0.19.1, ``descheduler`` from
#: 0.19.2 (and for 0.18.2, published the same day).
CHART_NAMES = ("descheduler-helm-chart", "descheduler")


def chart_version(reference: str) -> str:
    """The chart version a pin names: ``0.31.0`` for ``0.31.0``, ``v0.31.0`` and the chart's release tag in the
    descheduler repository, ``descheduler-helm-chart-0.31.0`` (an Argo CD git source's ``targetRevision``)."""
    return reference.strip().removeprefix(f"{CHART_NAMES[0]}-").removeprefix("v")
