"""Upstream's validators (:mod:`desched.validation`) run once per document, with paths made absolute.

Several rules (DS006, DS301–DS304, DS309, DS310) report slices of the same results; :func:`arg_errors` computes
them once per :class:`~desched.linter.rules._base.Context` and tags each with the upstream phase it belongs to.
"""

from __future__ import annotations

from typing import NamedTuple

from desched import validation
from desched.linter.rules._base import Context, Path
from desched.plugins import construct_args, validate_args

__all__ = ["LocatedError", "arg_errors", "located_errors"]


class LocatedError(NamedTuple):
    message: str
    path: Path
    code: str
    plugin: str


def arg_errors(ctx: Context) -> list[LocatedError]:
    """Every validation and constructor error of the document (computed once per context)."""
    return ctx.arg_errors


def located_errors(ctx: Context) -> list[LocatedError]:
    """Every validation and constructor error of the document, in upstream order, with absolute paths."""
    found: list[LocatedError] = []
    if ctx.is_v1alpha2:
        for error in validation.validate_policy(ctx.policy, ctx.target):
            found.append(LocatedError(error.message, error.path, error.code, ""))
        for profile in ctx.model.profiles:
            label = profile.name
            for config in profile.configs:
                name, plain, base = config.name, config.raw_args, config.args_path
                if name not in ctx.plugins:
                    continue
                for error in validate_args(name, plain, ctx.target, ctx.distribution):
                    found.append(
                        LocatedError(f"in profile {label}: {error.message}", base + error.path, error.code, name)
                    )
                for error in construct_args(name, plain, ctx.target, ctx.distribution):
                    found.append(
                        LocatedError(
                            f'profile "{label}": unable to initialize "{name}" plugin: {error.message}',
                            base + error.path,
                            error.code,
                            name,
                        )
                    )
    return found
