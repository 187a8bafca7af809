"""One registry of plugins, and everything that lists plugins agrees with it: the plugin modules, the published
JSON Schemas, validation dispatch and the executor's implementations."""

from __future__ import annotations

import inspect
import json
import pkgutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from desched import plugins, versions
from desched.api.spec import EXTENSION_POINTS
from desched.executor.plugins import implementations
from desched.plugins import DISTRIBUTIONS, REGISTRY, Plugin, validate_args
from desched.plugins.base import PodScope, as_written

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
    assert modules == {module for module, _ in plugins._MODULES}
    assert list(REGISTRY) == UPSTREAM_ORDER
    assert [
        plugin.name for plugin in REGISTRY.values()
    ] == UPSTREAM_ORDER  # each module declares what it is listed with


def test_distributions_extend_upstream_without_changing_it():
    """Upstream's build is the registry itself; OpenShift's registers upstream's plugins, then its own modules'."""
    assert plugins.DISTRIBUTIONS[plugins.UPSTREAM].plugins is REGISTRY
    modules = {info.name for info in pkgutil.iter_modules(plugins.openshift.__path__)}
    assert modules == {module for module, _ in plugins.openshift.MODULES}
    assert list(plugins.DISTRIBUTIONS[plugins.OPENSHIFT].plugins) == [*UPSTREAM_ORDER, "KubevirtMigrationAware"]


@pytest.mark.parametrize("name", UPSTREAM_ORDER)
def test_each_plugin_is_complete(name: str):
    plugin = REGISTRY[name]
    assert plugin.name == name
    assert plugin.extension_points and set(plugin.extension_points) <= set(EXTENSION_POINTS)
    assert plugin.args.name == f"{name}Args" and plugin.args.strict
    given = {"namespaces": {"exclude": ["kube-system"]}} if "namespaces" in plugin.args.fields else {}
    typed = plugin.decode(given)
    assert plugin.defaults(typed) == plugin.defaults(plugin.defaults(typed))  # SetDefaults is idempotent
    assert given == ({"namespaces": {"exclude": ["kube-system"]}} if given else {})
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
    failed = REGISTRY["RemoveFailedPods"]
    assert failed.defaults(failed.decode({})).min_pod_lifetime_seconds == 3600
    assert failed.defaults(failed.decode({"minPodLifetimeSeconds": 0})).min_pod_lifetime_seconds == 0
    spread = REGISTRY["RemovePodsViolatingTopologySpreadConstraint"]
    defaulted = spread.defaults(spread.decode({}))
    assert (defaulted.topology_balance_node_fit, defaulted.constraints) == (True, ("DoNotSchedule",))
    lifetime = REGISTRY["PodLifeTime"]
    assert lifetime.defaults(lifetime.decode({"maxPodLifeTimeSeconds": 5})) == lifetime.decode(
        {"maxPodLifeTimeSeconds": 5}
    )


def test_every_upstream_plugin_decodes_typed_args():
    for plugin in REGISTRY.values():
        assert plugin.decode is not as_written, plugin.name
        assert isinstance(plugin.decode({}), tuple), plugin.name  # a NamedTuple record


def _scope_problems(registry: Mapping[str, Plugin]) -> list[str]:
    """The evicting plugins of ``registry`` whose scope hook is missing or does not answer a PodScope."""
    problems = []
    for plugin in registry.values():
        if not plugin.evicts:
            continue
        if plugin.scope is None:
            problems.append(f"{plugin.name}: no scope hook")
            continue
        for target in range(versions.OLDEST, versions.NEWEST + 1):
            if not isinstance(plugin.scope(plugin.decode({}), target), PodScope):
                problems.append(f"{plugin.name}: scope at v0.{target} is not a PodScope")
    return problems


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_every_evicting_plugin_declares_its_scope(distribution: str):
    assert _scope_problems(DISTRIBUTIONS[distribution].plugins) == []


def test_a_plugin_without_a_scope_hook_is_caught():
    forgetful = {
        name: plugin._replace(scope=None) if name == "PodLifeTime" else plugin for name, plugin in REGISTRY.items()
    }
    assert _scope_problems(forgetful) == ["PodLifeTime: no scope hook"]
