"""The executor's implementations of the descheduler plugins that evict, one module each.

Each public module of this package declares ``NAME`` (the registered plugin it implements) and an ``Implementation(args,
handle)`` class (see :mod:`desched.executor.framework` for the protocol); what a plugin is (its extension points,
args and defaults) comes from the registry, :mod:`desched.plugins`. Modules whose name starts with ``_`` hold helpers
several implementations share. ``tests/kernel/plugins/test_plugin_registry.py`` checks that the implementations
cover exactly the registered deschedule and balance plugins.
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib import import_module
from types import ModuleType

__all__ = ["implementations", "module_for"]


@cache
def implementations() -> dict[str, ModuleType]:
    """Every implementation module by the plugin ``NAME`` it declares (all are imported on the first call)."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            module = import_module(f"{__name__}.{info.name}")
            found[module.NAME] = module
    return found


def module_for(name: str) -> ModuleType | None:
    """The implementation of plugin ``name``; ``None`` for names no module implements (DefaultEvictor is built by the
    framework itself)."""
    return implementations().get(name)
