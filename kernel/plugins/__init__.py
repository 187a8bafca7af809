"""The descheduler's plugins, one module per upstream ``pkg/framework/plugins/<folder>``, and the registry built
from them.

Each module declares ``PLUGINS``, a tuple of :class:`~desched.plugins.base.Plugin` records (``nodeutilization``
declares two, as upstream's folder does): name, extension points, args type, defaults, validation per release and
constructor checks. :data:`REGISTRY` lists them in upstream's registration order; everything else that needs the
plugins (the structural checker, the JSON Schemas, validation dispatch, the rules, the scope model, the migrator and
the executor's implementations) reads it, and ``tests/kernel/plugins/test_plugin_registry.py`` checks they agree.

:data:`DISTRIBUTIONS` names the descheduler builds a policy may be checked against: ``upstream`` (:data:`REGISTRY`)
and ``openshift``, upstream's plugins plus those OpenShift's build registers beyond them (:mod:`.openshift`).
"""

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Any, NamedTuple

from desched.plugins import openshift
from desched.plugins.base import Plugin
from desched.validation.core import ArgError, mapping

__all__ = [
    "DISTRIBUTIONS",
    "OPENSHIFT",
    "REGISTRY",
    "UPSTREAM",
    "Distribution",
    "Plugin",
    "construct_args",
    "elsewhere",
    "validate_args",
]

# Upstream's registration order (pkg/descheduler/setupplugins.go): several messages list plugins in it. Each module
# with the plugins it declares, so that a plugin's module is imported only when the plugin is first looked up.
_MODULES = (
    ("defaultevictor", ("DefaultEvictor",)),
    ("nodeutilization", ("LowNodeUtilization", "HighNodeUtilization")),
    ("removeduplicates", ("RemoveDuplicates",)),
    ("removepodsviolatingtopologyspreadconstraint", ("RemovePodsViolatingTopologySpreadConstraint",)),
    ("podlifetime", ("PodLifeTime",)),
    ("removefailedpods", ("RemoveFailedPods",)),
    ("removepodshavingtoomanyrestarts", ("RemovePodsHavingTooManyRestarts",)),
    ("removepodsviolatinginterpodantiaffinity", ("RemovePodsViolatingInterPodAntiAffinity",)),
    ("removepodsviolatingnodeaffinity", ("RemovePodsViolatingNodeAffinity",)),
    ("removepodsviolatingnodetaints", ("RemovePodsViolatingNodeTaints",)),
)


class _Registry(Mapping[str, Plugin]):
    """Plugins by name, in registration order; a plugin's module is imported when one of its plugins is first looked
    up (a plain policy names a few), never to list the names or answer ``in``. A module that does not declare the
    plugins listed for it raises RuntimeError when imported."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = modules  # plugin name -> dotted name of its module, in registration order
        self._loaded: dict[str, Plugin] = {}

    def __getitem__(self, name: str) -> Plugin:
        plugin = self._loaded.get(name)
        if plugin is None:
            module = self._modules[name]
            declared = import_module(module).PLUGINS
            listed = [other for other, home in self._modules.items() if home == module]
            if [found.name for found in declared] != listed:
                raise RuntimeError(f"{module} declares other plugins than {listed}")
            self._loaded.update((found.name, found) for found in declared)
            plugin = self._loaded[name]
        return plugin

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


def _modules(
    package: str, modules: tuple[tuple[str, tuple[str, ...]], ...], before: Mapping[str, str]
) -> dict[str, str]:
    """Plugin name -> dotted module name: ``before``, then the plugins of ``modules`` of ``package``, in order."""
    found = dict(before)
    for module, names in modules:
        for name in names:
            if name in found:
                raise RuntimeError(f"plugin {name} is declared twice")
            found[name] = f"{package}.{module}"
    return found


_UPSTREAM_MODULES = _modules(__name__, _MODULES, {})
#: Every registered plugin by name, in registration order.
REGISTRY: Mapping[str, Plugin] = _Registry(_UPSTREAM_MODULES)

UPSTREAM, OPENSHIFT = "upstream", "openshift"


class Distribution(NamedTuple):
    """A descheduler build: its ``name`` (``--distribution``), how messages name it (``title``), and every plugin
    it registers by name, in its registration order."""

    name: str
    title: str
    plugins: Mapping[str, Plugin]


#: The descheduler builds by name: upstream's and OpenShift's.
DISTRIBUTIONS: dict[str, Distribution] = {
    UPSTREAM: Distribution(UPSTREAM, "upstream's descheduler", REGISTRY),
    OPENSHIFT: Distribution(
        OPENSHIFT,
        "OpenShift's descheduler build",
        _Registry(_modules(openshift.__name__, openshift.MODULES, _UPSTREAM_MODULES)),
    ),
}


def elsewhere(plugin: str) -> Distribution | None:
    """The build beyond upstream's that registers ``plugin`` when upstream's does not; ``None`` for upstream's
    plugins and for names no build registers."""
    if plugin in REGISTRY:
        return None
    return next((build for build in DISTRIBUTIONS.values() if plugin in build.plugins), None)


def _args(args: Any) -> dict[Any, Any]:
    # `args: null`, a missing `args` and args of the wrong type all leave the zero-valued args struct.
    return mapping(args) or {}


def validate_args(plugin: str, args: Any, target: int, distribution: str = UPSTREAM) -> list[ArgError]:
    """``Validate<Plugin>Args`` of ``plugin`` as ``distribution`` registers it (upstream's by default), at release
    ``v0.<target>``.

    Errors come in upstream's order; validators that stop at their first error (both nodeutilization ones, and most
    before v0.34) return at most one. Plugins the distribution does not register give ``[]`` (another rule reports
    them).

    >>> [e.message for e in validate_args("RemoveDuplicates", {"namespaces": {"include": ["a"], "exclude": ["b"]}}, 36)]
    ['only one of Include/Exclude namespaces can be set']
    """
    found = DISTRIBUTIONS[distribution].plugins.get(plugin)
    return found.validate(_args(args), target) if found is not None else []


def construct_args(plugin: str, args: Any, target: int, distribution: str = UPSTREAM) -> list[ArgError]:
    """The failures ``plugin``'s constructor (as ``distribution`` registers it) hits at start-up that depend on the
    args alone (selectors, Prometheus thresholds); ``[]`` for plugins whose constructor cannot fail that way."""
    found = DISTRIBUTIONS[distribution].plugins.get(plugin)
    if found is None or found.construct is None:
        return []
    return found.construct(_args(args), target)
