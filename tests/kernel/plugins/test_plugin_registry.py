"""One registry of plugins, and everything that lists plugins agrees with it: the plugin modules, the published
JSON Schemas, validation dispatch and the executor's implementations."""

from __future__ import annotations

import inspect
import json
import pkgutil
from pathlib import Path

import pytest

from desched import plugins, versions
from desched.executor.plugins import implementations
from desched.plugins import REGISTRY, validate_args
from desched.policy.spec import EXTENSION_POINTS

ROOT = Path(__file__).resolve().parents[3]
# Upstream's registration order (pkg/descheduler/setupplugins.go@v0.36.0); error messages list plugins in it.
UPSTREAM_ORDER = [
    "DefaultEvictor",
    "LowNodeUtilization",
    "HighNodeUtilization",
    "RemoveDuplicates",
    "RemovePodsViolatingTopologySpreadConstraint",
    "PodLifeTime",
    "RemoveFailedPods",
    "RemovePodsHavingTooManyRestarts",
    "RemovePodsViolatingInterPodAntiAffinity",
    "RemovePodsViolatingNodeAffinity",
    "RemovePodsViolatingNodeTaints",
]
EVICTING = ("deschedule", "balance")


def test_every_plugin_module_is_registered_in_upstream_order():
    modules = {info.name for info in pkgutil.iter_modules(plugins.__path__) if not info.ispkg} - {"base"}
    assert modules == set(plugins._MODULES)
    assert list(REGISTRY) == UPSTREAM_ORDER


def test_distributions_extend_upstream_without_changing_it():
    """Upstream's build is the registry itself; OpenShift's registers upstream's plugins, then its own modules'."""
    assert plugins.DISTRIBUTIONS[plugins.UPSTREAM].plugins is REGISTRY
    modules = {info.name for info in pkgutil.iter_modules(plugins.openshift.__path__)}
    assert modules == set(plugins.openshift.MODULES)
    assert list(plugins.DISTRIBUTIONS[plugins.OPENSHIFT].plugins) == [*UPSTREAM_ORDER, "KubevirtMigrationAware"]


@pytest.mark.parametrize("name", UPSTREAM_ORDER)
def test_each_plugin_is_complete(name: str):
    plugin = REGISTRY[name]
    assert plugin.name == name
    assert plugin.extension_points and set(plugin.extension_points) <= set(EXTENSION_POINTS)
    assert plugin.args.name == f"{name}Args" and plugin.args.strict
    given = {"namespaces": {"exclude": ["kube-system"]}} if "namespaces" in plugin.args.fields else {}
    defaulted = plugin.defaults(given)
    assert defaulted is not given and given == ({"namespaces": {"exclude": ["kube-system"]}} if given else {})
    for target in range(versions.OLDEST, versions.NEWEST + 1):
        assert validate_args(name, {}, target) == plugin.validate({}, target)


@pytest.mark.parametrize("release", versions.supported())
def test_the_published_schema_lists_the_registry(release: str):
    schema = json.loads((ROOT / "schemas" / release / "deschedulerpolicy-v1alpha2.json").read_text())
    dispatch = {
        rule["if"]["properties"]["name"]["const"]: rule["then"]["properties"]["args"]["$ref"]
        for rule in schema["$defs"]["PluginConfig"]["allOf"]
    }
    assert dispatch == {name: f"#/$defs/{plugin.args.name}" for name, plugin in REGISTRY.items()}
    minor = versions.parse(release)
    for plugin in REGISTRY.values():
        published = set(schema["$defs"][plugin.args.name]["properties"])
        assert published == {key for key, field in plugin.args.fields.items() if field.exists_in(minor)}, plugin.name


def test_the_executor_implements_exactly_the_evicting_plugins_at_their_points():
    evicting = {name for name, plugin in REGISTRY.items() if plugin.evicts}
    assert set(implementations()) == evicting
    for name, module in implementations().items():
        methods = {point for point in EVICTING if inspect.isfunction(getattr(module.Implementation, point, None))}
        assert methods == set(REGISTRY[name].extension_points), name


def test_the_default_evictor_is_the_only_evictor_plugin():
    evictors = [name for name, plugin in REGISTRY.items() if not plugin.evicts]
    assert evictors == ["DefaultEvictor"]
    assert REGISTRY["DefaultEvictor"].extension_points == ("filter", "preevictionfilter")


def test_defaults_are_upstream_set_defaults():
    assert REGISTRY["RemoveFailedPods"].defaults({}) == {"minPodLifetimeSeconds": 3600}
    assert REGISTRY["RemoveFailedPods"].defaults({"minPodLifetimeSeconds": 0}) == {"minPodLifetimeSeconds": 0}
    spread = REGISTRY["RemovePodsViolatingTopologySpreadConstraint"].defaults({})
    assert spread == {"topologyBalanceNodeFit": True, "constraints": ["DoNotSchedule"]}
    assert REGISTRY["PodLifeTime"].defaults({"maxPodLifeTimeSeconds": 5}) == {"maxPodLifeTimeSeconds": 5}
