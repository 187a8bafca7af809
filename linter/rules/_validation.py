"""Upstream's validators (:mod:`desched.validation`) run once per document, with paths made absolute.

Several rules (DS006, DS301–DS304, DS309, DS310) report slices of the same results: ``Context.arg_errors`` computes
them once per document with :func:`located_errors`, each tagged with the upstream phase it belongs to.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from desched import validation
from desched.plugins import Plugin, construct_args, validate_args
from desched.tree import Path

if TYPE_CHECKING:
    from desched.policy.model import Policy

__all__ = ["LocatedError", "located_errors"]


class LocatedError(NamedTuple):
    message: str
    path: Path
    code: str
    plugin: str


def located_errors(
    policy: Mapping[str, Any], model: "Policy", target: int, plugins: Mapping[str, Plugin], distribution: str
) -> list[LocatedError]:
    """Every validation and constructor error of a v1alpha2 ``policy`` (decoded as ``model``) run by release
    ``target`` on the build of ``distribution`` (registering ``plugins``), in upstream order, with absolute paths."""
    found: list[LocatedError] = []
    for error in validation.validate_policy(policy, target):
        found.append(LocatedError(error.message, error.path, error.code, ""))
    for profile in model.profiles:
        label = profile.name
        for config in profile.configs:
            name, plain, base = config.name, config.raw_args, config.args_path
            if name not in plugins:
                continue
            for error in validate_args(name, plain, target, distribution):
                found.append(LocatedError(f"in profile {label}: {error.message}", base + error.path, error.code, name))
            for error in construct_args(name, plain, target, distribution):
                found.append(
                    LocatedError(
                        f'profile "{label}": unable to initialize "{name}" plugin: {error.message}',
                        base + error.path,
                        error.code,
                        name,
                    )
                )
    return found
