"""The descheduler's plugins, one module per upstream ``pkg/framework/plugins/<folder>``, and the registry built
from them.

Each module declares ``PLUGINS``, a tuple of :class:`~desched.plugins.base.Plugin` records (``nodeutilization``
declares two, as upstream's folder does): name, extension points, args type, defaults, validation per release and
constructor checks. :data:`REGISTRY` lists them in upstream's registration order; everything else that needs the
plugins (the structural checker, the JSON Schemas, validation dispatch, the rules, the scope model, the migrator and
the executor's implementations) reads it, and ``tests/test_plugin_registry.py`` checks they agree.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from desched.plugins.base import Plugin
from desched.validation.core import ArgError, mapping

__all__ = ["REGISTRY", "Plugin", "construct_args", "validate_args"]

# Upstream's registration order (pkg/descheduler/setupplugins.go): several messages list plugins in it.
_MODULES = (
    "defaultevictor",
    "nodeutilization",
    "removeduplicates",
    "removepodsviolatingtopologyspreadconstraint",
    "podlifetime",
    "removefailedpods",
    "removepodshavingtoomanyrestarts",
    "removepodsviolatinginterpodantiaffinity",
    "removepodsviolatingnodeaffinity",
    "removepodsviolatingnodetaints",
)


def _registry() -> dict[str, Plugin]:
    found: dict[str, Plugin] = {}
    for module in _MODULES:
        for plugin in import_module(f"{__name__}.{module}").PLUGINS:
            if plugin.name in found:
                raise RuntimeError(f"plugin {plugin.name} is declared twice")
            found[plugin.name] = plugin
    return found


#: Every registered plugin by name, in registration order.
REGISTRY: dict[str, Plugin] = _registry()


def _args(args: Any) -> dict[Any, Any]:
    # `args: null`, a missing `args` and args of the wrong type all leave the zero-valued args struct.
    return mapping(args) or {}


def validate_args(plugin: str, args: Any, target: int) -> list[ArgError]:
    """Upstream's ``Validate<Plugin>Args`` for ``plugin`` at release ``v0.<target>``.

    Errors come in upstream's order; validators that stop at their first error (both nodeutilization ones, and most
    before v0.34) return at most one. Unknown plugins give ``[]`` (another rule reports them).

    >>> [e.message for e in validate_args("RemoveDuplicates", {"namespaces": {"include": ["a"], "exclude": ["b"]}}, 36)]
    ['only one of Include/Exclude namespaces can be set']
    """
    found = REGISTRY.get(plugin)
    return found.validate(_args(args), target) if found is not None else []


def construct_args(plugin: str, args: Any, target: int) -> list[ArgError]:
    """The failures ``plugin``'s constructor hits at start-up that depend on the args alone (selectors, Prometheus
    thresholds); ``[]`` for plugins whose constructor cannot fail that way."""
    found = REGISTRY.get(plugin)
    if found is None or found.construct is None:
        return []
    return found.construct(_args(args), target)
