"""The descheduler Helm chart (charts/descheduler of kubernetes-sigs/descheduler) per chart version, read from the
records scripts/chart-records generates into :data:`RECORDS` (docs/helm-chart.md#9-the-chart-records).

``index.json`` lists every chart version with its name, appVersion and tag: what wrapper recognition and release
inference need (:func:`charts`, :func:`chart_names`, :func:`chart_version`). ``<version>.json`` holds the rest of
what desched uses of that version (:class:`ChartRelease`, :func:`chart_at`), and is read only where chart values are
rendered. No chart fact is written here: a new chart version is a new record.
"""

import os
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from desched.tree import at_path

if TYPE_CHECKING:
    from desched.chart.schema import IndexEntry, Rbac, Record, WorkloadTemplate

__all__ = [
    "RECORDS",
    "ChartRelease",
    "api_version_upgrade",
    "chart_at",
    "chart_deploying",
    "chart_names",
    "chart_version",
    "charts",
    "first_newer",
    "values_at",
    "values_read",
]

#: The directory of the records. Every cache below is per directory, so pointing this elsewhere (a test's records)
#: needs nothing else.
RECORDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "records")


@cache
def _load(directory: str, name: str) -> Any:
    """The JSON file ``name`` of ``directory``, parsed once."""
    import json  # only runs that meet chart values read a record

    with open(os.path.join(directory, name), encoding="utf-8") as handle:
        return json.load(handle)


def charts() -> "dict[str, IndexEntry]":
    """Every chart version, oldest first, with its name, appVersion and tag (the index; never change it)."""
    return _index(RECORDS)


def _index(directory: str) -> "dict[str, IndexEntry]":
    return cast("dict[str, IndexEntry]", _load(directory, "index.json")["charts"])


def chart_names() -> frozenset[str]:
    """Every name the chart has had in ``Chart.yaml``."""
    return _names(RECORDS)


@cache
def _names(directory: str) -> frozenset[str]:
    return frozenset(entry["name"] for entry in _index(directory).values())


def chart_version(reference: str) -> str:
    """The chart version a pin names: ``0.31.0`` for ``0.31.0``, ``v0.31.0`` and the chart's release tag in the
    descheduler repository (an Argo CD git source's ``targetRevision``), also for a version no record has."""
    text = reference.strip()
    for prefix in _tag_prefixes(RECORDS):
        text = text.removeprefix(prefix)
    return text.removeprefix("v")


@cache
def _tag_prefixes(directory: str) -> tuple[str, ...]:
    """What each chart tag writes before its version (``descheduler-helm-chart-``), once each."""
    return tuple(dict.fromkeys(entry["tag"].removesuffix(version) for version, entry in _index(directory).items()))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _minor(version: str) -> int:
    return _key(version)[1]


class ChartRelease(NamedTuple):
    """One chart version and its record (shared: read it, never change it). The ConfigMap template always writes the
    whole ``deschedulerPolicy`` map (``toYaml``, keys sorted) under an ``apiVersion`` and ``kind: "DeschedulerPolicy"``
    header, as the ConfigMap's ``policy.yaml`` key."""

    version: str
    record: "Record"

    @property
    def name(self) -> str:
        """``name`` of Chart.yaml, one of :func:`chart_names`."""
        return self.record["chart"]["name"]

    @property
    def app_version(self) -> str:
        """``appVersion`` of Chart.yaml: the release the chart deploys."""
        return self.record["chart"]["app_version"]

    @property
    def default_policy(self) -> dict[str, Any]:
        """The ``deschedulerPolicy`` default, in values.yaml's order."""
        return self.record["policy"]["default"] or {}

    @property
    def values_defaults(self) -> dict[str, Any]:
        """values.yaml, whole."""
        return self.record["values"]["defaults"]

    @property
    def values_read(self) -> frozenset[str]:
        """Every top-level value the chart reads (Helm's ``global`` included)."""
        return frozenset(self.record["values"]["known_keys"])

    @property
    def api_version_templated(self) -> bool:
        """The header's ``apiVersion`` is written from a value, not hard-coded."""
        return self.record["policy"]["header_api_version"]["value"] is not None

    @property
    def default_api_version(self) -> str:
        """The ``apiVersion`` the ConfigMap's policy carries with the chart's default values."""
        header = self.record["policy"]["header_api_version"]
        if header["value"] is None:
            return str(header["literal"])
        return str(values_at(self.values_defaults, header["value"]) or "")

    @property
    def renders_no_empty_policy(self) -> bool:
        """The ConfigMap template renders nothing when ``deschedulerPolicy`` is empty (null, ...): the policy comes
        from a ConfigMap of the user's; before, it writes the empty value as the policy."""
        return self.record["policy"]["empty_policy_renders_no_configmap"]

    @property
    def policy_through_tpl(self) -> bool:
        """The ConfigMap template renders the policy's text as a template (``tpl``)."""
        return self.record["policy"]["passes_through_tpl"]

    @property
    def workloads(self) -> "list[tuple[str, WorkloadTemplate]]":
        """The workloads the chart's templates can render, each with its kind: the CronJob, then the Deployment where
        the chart has one."""
        found = self.record["workload"]
        kinds = (("CronJob", found["cronjob"]), ("Deployment", found["deployment"]))
        return [(kind, facts) for kind, facts in kinds if facts is not None]

    @property
    def rbac(self) -> "Rbac":
        """The chart's ClusterRole."""
        return self.record["rbac"]


def chart_at(version: str) -> ChartRelease | None:
    """The chart at ``version`` (a chart version of :func:`charts`, as :func:`chart_version` reads a pin); ``None``
    for any other."""
    return _chart_at(RECORDS, chart_version(version))


@cache
def _chart_at(directory: str, version: str) -> ChartRelease | None:
    if version not in _index(directory):
        return None
    return ChartRelease(version, cast("Record", _load(directory, f"{version}.json")))


def chart_deploying(minor: int, version: str = "") -> ChartRelease | None:
    """The newest chart version that deploys release ``minor`` (the one whose ``appVersion`` is ``version``, when one
    is); the newest chart for a release newer than every chart's, ``None`` for one older than every chart's."""
    index = charts()
    wanted = version.removeprefix("v")
    exact = [text for text, entry in index.items() if entry["app_version"] == wanted]
    same = [text for text, entry in index.items() if _minor(entry["app_version"]) == minor]
    if exact or same:
        return chart_at(max(exact or same, key=_key))
    newest = max(index, key=_key)
    return chart_at(newest) if minor > _minor(index[newest]["app_version"]) else None


def values_read(minor: int) -> frozenset[str]:
    """The top-level values the charts deploying release ``minor`` read, for values no one chart version renders; a
    release older or newer than every chart's counts as the oldest or newest."""
    deployed = {text: _minor(entry["app_version"]) for text, entry in charts().items()}
    nearest = min(max(minor, min(deployed.values())), max(deployed.values()))
    found = [chart_at(text) for text, release in deployed.items() if release == nearest]
    return frozenset().union(*(chart.values_read for chart in found if chart is not None))


def api_version_upgrade(chart: ChartRelease | None) -> str | None:
    """For a chart whose ConfigMap hard-codes the policy's ``apiVersion``: the oldest newer chart version that writes
    it from the values. ``None`` for no chart, a chart that does already, and when no newer one does."""
    if chart is None or chart.api_version_templated:
        return None
    return first_newer(chart, lambda found: found.api_version_templated)


def first_newer(chart: ChartRelease, test: Callable[[ChartRelease], bool]) -> str | None:
    """The oldest chart version newer than ``chart`` that passes ``test``; ``None`` when none does."""
    newer = (chart_at(text) for text in charts() if _key(text) > _key(chart.version))
    return next((found.version for found in newer if found is not None and test(found)), None)


def values_at(values: Mapping[str, Any], path: str) -> Any:
    """The value at the dotted values ``path`` (``leaderElection.enabled``); ``None`` when a part is missing or not a
    map."""
    return at_path(values, tuple(path.split(".")))
