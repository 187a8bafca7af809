"""The ten descheduler plugins, one module each (see :mod:`desched.executor.framework` for the module protocol)."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

MODULES = {
    "LowNodeUtilization": "lownodeutilization",
    "HighNodeUtilization": "highnodeutilization",
    "RemoveDuplicates": "removeduplicates",
    "RemovePodsViolatingTopologySpreadConstraint": "topologyspread",
    "RemovePodsViolatingInterPodAntiAffinity": "interpodantiaffinity",
    "RemovePodsViolatingNodeAffinity": "nodeaffinity",
    "RemovePodsViolatingNodeTaints": "nodetaints",
    "RemovePodsHavingTooManyRestarts": "toomanyrestarts",
    "PodLifeTime": "podlifetime",
    "RemoveFailedPods": "failedpods",
}


@cache
def module_for(name: str) -> ModuleType | None:
    """The module of plugin ``name``, imported on first use; ``None`` for names that are not one of the ten
    (DefaultEvictor is built by the framework itself)."""
    module = MODULES.get(name)
    return importlib.import_module(f"{__name__}.{module}") if module else None
