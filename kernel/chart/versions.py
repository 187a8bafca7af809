"""The descheduler Helm chart per chart version (0.19.0 to 0.36.0): its name, its default policy values and how its
ConfigMap template renders them (:func:`chart_at`; docs/helm-chart.md). Kept apart from :mod:`desched.chart.names` so
that only runs with chart values pay for loading it.

Every table was read off the chart at each ``descheduler-helm-chart-<version>`` tag: ``name``, ``appVersion`` and
``deprecated`` of ``Chart.yaml``; the ``deschedulerPolicy`` and ``deschedulerPolicyAPIVersion`` entries of
``values.yaml``, written here as Python literals in the file's order; and ``templates/configmap.yaml``.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, NamedTuple, TypeVar

from desched.chart.names import APP_VERSIONS, chart_version

__all__ = ["FIRST_CHART", "HARD_CODED_API_VERSION", "ChartRelease", "chart_at", "chart_deploying", "since"]


class ChartRelease(NamedTuple):
    """One chart version: its ``Chart.yaml``, the defaults of the values its ConfigMap template reads, and how that
    template renders them. The template always writes the whole ``deschedulerPolicy`` map (``toYaml``, keys sorted)
    under an ``apiVersion`` and ``kind: "DeschedulerPolicy"`` header, as the ConfigMap's ``policy.yaml`` key."""

    version: str
    name: str  #: ``name`` of Chart.yaml, one of :data:`desched.chart.names.CHART_NAMES`
    app_version: str
    deprecated: bool  #: ``deprecated: true`` in Chart.yaml
    default_policy: dict[str, Any]  #: the ``deschedulerPolicy`` default, as in values.yaml (shared: never change it)
    policy_api_version: str | None  #: the ``deschedulerPolicyAPIVersion`` default; ``None`` where the chart has none
    skips_empty_policy: bool  #: a null or empty ``deschedulerPolicy`` (once merged) renders no ConfigMap
    tpl: bool  #: the rendered policy passes through ``tpl``: its strings may be templates over all the values

    def fresh_policy(self) -> dict[str, Any]:
        """A copy of the default policy, the caller's to change."""
        return copy.deepcopy(self.default_policy)

    @property
    def api_version_templated(self) -> bool:
        """The header's ``apiVersion`` is ``{{ .Values.deschedulerPolicyAPIVersion }}``, not hard-coded."""
        return self.policy_api_version is not None

    @property
    def default_api_version(self) -> str:
        """The ``apiVersion`` the ConfigMap's policy carries with the chart's default values."""
        return self.policy_api_version or HARD_CODED_API_VERSION


#: The header's ``apiVersion`` before the chart had ``deschedulerPolicyAPIVersion`` (up to 0.26.1).
HARD_CODED_API_VERSION = "descheduler/v1alpha1"

# Pieces the default policies share (nothing changes them: ChartRelease.fresh_policy copies).
_ENABLED = {"enabled": True}
_REQUIRED_AFFINITY = {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}
_RESTARTS = {"podRestartThreshold": 100, "includingInitContainers": True}
_NO_SOFT_CONSTRAINTS = {"includeSoftConstraints": False}
_THRESHOLDS = {
    "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
    "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50},
}

# v1alpha1 strategies, charts 0.19.0 to 0.24.1.
_STRATEGIES_0_19 = {
    "strategies": {
        "RemoveDuplicates": _ENABLED,
        "RemovePodsViolatingNodeTaints": _ENABLED,
        "RemovePodsViolatingNodeAffinity": {"enabled": True, "params": _REQUIRED_AFFINITY},
        "RemovePodsViolatingInterPodAntiAffinity": _ENABLED,
        "LowNodeUtilization": {"enabled": True, "params": {"nodeResourceUtilizationThresholds": _THRESHOLDS}},
    }
}

# v1alpha1 strategies, charts 0.25.0 to 0.29.0: two more (too many restarts, topology spread).
_STRATEGIES_0_25 = {
    "strategies": {
        "RemoveDuplicates": _ENABLED,
        "RemovePodsHavingTooManyRestarts": {"enabled": True, "params": {"podsHavingTooManyRestarts": _RESTARTS}},
        "RemovePodsViolatingNodeTaints": _ENABLED,
        "RemovePodsViolatingNodeAffinity": {"enabled": True, "params": _REQUIRED_AFFINITY},
        "RemovePodsViolatingInterPodAntiAffinity": _ENABLED,
        "RemovePodsViolatingTopologySpreadConstraint": {"enabled": True, "params": _NO_SOFT_CONSTRAINTS},
        "LowNodeUtilization": {"enabled": True, "params": {"nodeResourceUtilizationThresholds": _THRESHOLDS}},
    }
}

_DESCHEDULE = {
    "enabled": [
        "RemovePodsHavingTooManyRestarts",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
        "RemovePodsViolatingInterPodAntiAffinity",
    ]
}
_EVICTOR_FLAGS = {"name": "DefaultEvictor", "args": {"ignorePvcPods": True, "evictLocalStoragePods": True}}

# v1alpha2, chart 0.30.0 only, as upstream wrote it: the node affinity args sit under RemovePodsViolatingNodeTaints,
# and RemovePodsViolatingNodeAffinity (no pluginConfig entry) is enabled at balance too.
_PROFILES_0_30_0 = {
    "profiles": [
        {
            "name": "default",
            "pluginConfig": [
                _EVICTOR_FLAGS,
                {"name": "RemoveDuplicates"},
                {"name": "RemovePodsHavingTooManyRestarts", "args": _RESTARTS},
                {"name": "RemovePodsViolatingNodeTaints", "args": _REQUIRED_AFFINITY},
                {"name": "RemovePodsViolatingInterPodAntiAffinity"},
                {"name": "RemovePodsViolatingTopologySpreadConstraint", "args": _NO_SOFT_CONSTRAINTS},
                {"name": "LowNodeUtilization", "args": _THRESHOLDS},
            ],
            "plugins": {
                "balance": {
                    "enabled": [
                        "RemoveDuplicates",
                        "RemovePodsViolatingNodeAffinity",
                        "RemovePodsViolatingTopologySpreadConstraint",
                        "LowNodeUtilization",
                    ]
                },
                "deschedule": _DESCHEDULE,
            },
        }
    ]
}

# v1alpha2 from chart 0.30.1: the pluginConfig entries after DefaultEvictor, and the plugins enabled.
_PLUGIN_CONFIG = [
    {"name": "RemoveDuplicates"},
    {"name": "RemovePodsHavingTooManyRestarts", "args": _RESTARTS},
    {"name": "RemovePodsViolatingNodeAffinity", "args": _REQUIRED_AFFINITY},
    {"name": "RemovePodsViolatingNodeTaints"},
    {"name": "RemovePodsViolatingInterPodAntiAffinity"},
    {"name": "RemovePodsViolatingTopologySpreadConstraint"},
    {"name": "LowNodeUtilization", "args": _THRESHOLDS},
]
_PLUGINS = {
    "balance": {"enabled": ["RemoveDuplicates", "RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"]},
    "deschedule": _DESCHEDULE,
}

# Charts 0.30.1 to 0.33.0: DefaultEvictor with the boolean flags.
_PROFILES_0_30_1 = {
    "profiles": [{"name": "default", "pluginConfig": [_EVICTOR_FLAGS, *_PLUGIN_CONFIG], "plugins": _PLUGINS}]
}

# Charts 0.34.0 to 0.36.0: DefaultEvictor with podProtections instead of the flags.
_EVICTOR_PROTECTIONS = {
    "name": "DefaultEvictor",
    "args": {"podProtections": {"defaultDisabled": ["PodsWithLocalStorage"], "extraEnabled": ["PodsWithPVC"]}},
}
_PROFILES_0_34 = {
    "profiles": [{"name": "default", "pluginConfig": [_EVICTOR_PROTECTIONS, *_PLUGIN_CONFIG], "plugins": _PLUGINS}]
}

#: The first chart version :func:`chart_at` describes (0.18.x tags disagree with their Chart.yaml versions).
FIRST_CHART = "0.19.0"

# Each table: (first chart version, value), the value holding up to the next row's version.
_NAMES = (("0.19.0", "descheduler-helm-chart"), ("0.19.2", "descheduler"))
_DEPRECATED = frozenset({"0.19.1"})
_DEFAULT_POLICIES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("0.19.0", _STRATEGIES_0_19),
    ("0.25.0", _STRATEGIES_0_25),
    ("0.30.0", _PROFILES_0_30_0),
    ("0.30.1", _PROFILES_0_30_1),
    ("0.34.0", _PROFILES_0_34),
)
_POLICY_API_VERSIONS = (("0.19.0", None), ("0.27.0", "descheduler/v1alpha1"), ("0.30.0", "descheduler/v1alpha2"))
_SKIPS_EMPTY_POLICY = (("0.19.0", False), ("0.30.0", True))  # {{- if .Values.deschedulerPolicy }} ... {{- end }}
_TPL = (("0.19.0", False), ("0.34.0", True))  # {{ tpl (toYaml .Values.deschedulerPolicy) . | trim | indent 4 }}


@cache
def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


_T = TypeVar("_T")


def since(table: tuple[tuple[str, _T], ...], version: str) -> _T:
    """The value of the last row of ``table`` whose first version is at most ``version``."""
    return [value for first, value in table if _key(first) <= _key(version)][-1]


def chart_at(version: str) -> ChartRelease | None:
    """The chart at ``version`` (exactly a chart version of :data:`APP_VERSIONS`, as
    :func:`desched.chart.names.chart_version` reads a pin: a leading ``v`` or the chart's tag prefix allowed), from
    0.19.0 on; ``None`` for any other. Its ``default_policy`` is shared: read it, or change
    :meth:`ChartRelease.fresh_policy`."""
    return _chart_at(chart_version(version))


@cache
def _chart_at(text: str) -> ChartRelease | None:
    if text not in APP_VERSIONS or _key(text) < _key(FIRST_CHART):
        return None
    return ChartRelease(
        version=text,
        name=since(_NAMES, text),
        app_version=APP_VERSIONS[text],
        deprecated=text in _DEPRECATED,
        default_policy=since(_DEFAULT_POLICIES, text),
        policy_api_version=since(_POLICY_API_VERSIONS, text),
        skips_empty_policy=since(_SKIPS_EMPTY_POLICY, text),
        tpl=since(_TPL, text),
    )


def chart_deploying(minor: int, version: str = "") -> ChartRelease | None:
    """The newest chart version that deploys release ``minor`` (the one whose ``appVersion`` is ``version``, when one
    is); the newest chart for a release newer than every chart's, ``None`` for one older than 0.19."""
    charts = [text for text in APP_VERSIONS if _key(text) >= _key(FIRST_CHART)]
    wanted = version.removeprefix("v")
    exact = [text for text in charts if APP_VERSIONS[text] == wanted]
    same = [text for text in charts if _key(APP_VERSIONS[text])[1] == minor]
    if exact or same:
        return chart_at(max(exact or same, key=_key))
    newest = max(charts, key=_key)
    return chart_at(newest) if minor > _key(APP_VERSIONS[newest])[1] else None
