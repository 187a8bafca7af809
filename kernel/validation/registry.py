"""Which validator and constructor check belongs to which plugin (upstream's ``setupplugins.go``), and dispatch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desched.validation import (
    defaultevictor,
    nodeutilization,
    podlifetime,
    removeduplicates,
    removefailedpods,
    removepodshavingtoomanyrestarts,
    removepodsviolatinginterpodantiaffinity,
    removepodsviolatingnodeaffinity,
    removepodsviolatingnodetaints,
    removepodsviolatingtopologyspreadconstraint,
)
from desched.validation.core import ArgError, mapping

__all__ = ["CONSTRUCTORS", "VALIDATORS", "construct_args", "validate_args"]

Check = Callable[[dict[Any, Any], int], list[ArgError]]

#: ``Validate<Plugin>Args`` per registered plugin.
VALIDATORS: dict[str, Check] = {
    "DefaultEvictor": defaultevictor.validate,
    "LowNodeUtilization": nodeutilization.validate_low,
    "HighNodeUtilization": nodeutilization.validate_high,
    "RemoveDuplicates": removeduplicates.validate,
    "RemovePodsViolatingTopologySpreadConstraint": removepodsviolatingtopologyspreadconstraint.validate,
    "PodLifeTime": podlifetime.validate,
    "RemoveFailedPods": removefailedpods.validate,
    "RemovePodsHavingTooManyRestarts": removepodshavingtoomanyrestarts.validate,
    "RemovePodsViolatingInterPodAntiAffinity": removepodsviolatinginterpodantiaffinity.validate,
    "RemovePodsViolatingNodeAffinity": removepodsviolatingnodeaffinity.validate,
    "RemovePodsViolatingNodeTaints": removepodsviolatingnodetaints.validate,
}

#: Start-up (phase E) checks of plugin constructors that depend on the args alone.
CONSTRUCTORS: dict[str, Check] = {
    "DefaultEvictor": defaultevictor.construct,
    "LowNodeUtilization": nodeutilization.construct_low,
}


def _args(args: Any) -> dict[Any, Any]:
    # `args: null`, a missing `args` and args of the wrong type all leave the zero-valued args struct.
    return mapping(args) or {}


def validate_args(plugin: str, args: Any, target: int) -> list[ArgError]:
    """Phase C: upstream's ``Validate<Plugin>Args`` for ``plugin`` at release ``v0.<target>``.

    Errors come in upstream's order; validators that stop at their first error (both nodeutilization ones, and most
    before v0.34) return at most one. Unknown plugins give ``[]`` (another rule reports them).

    >>> [e.message for e in validate_args("RemoveDuplicates", {"namespaces": {"include": ["a"], "exclude": ["b"]}}, 36)]
    ['only one of Include/Exclude namespaces can be set']
    """
    check = VALIDATORS.get(plugin)
    return check(_args(args), target) if check is not None else []


def construct_args(plugin: str, args: Any, target: int) -> list[ArgError]:
    """Phase E: failures the plugin constructor hits at start-up (selectors, Prometheus thresholds)."""
    check = CONSTRUCTORS.get(plugin)
    return check(_args(args), target) if check is not None else []
