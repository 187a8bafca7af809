"""RemoveFailedPods: ``ValidateRemoveFailedPodsArgs`` (docs/policy-api.md#412-removefailedpods): namespaces and
labelSelector rules.

v0.27-v0.33 stop at the first error; v0.34 on aggregate both.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    INT32_T,
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRINGS,
    UINT,
    args_struct,
    field,
    list_of,
)
from desched.plugins.base import Namespaces, Plugin, PodScope, flag, integers, selector, texts, whole
from desched.validation.core import ArgError
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemoveFailedPodsArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    return first_only(errors, target, aggregated_since=34)


#: ``RemoveFailedPodsArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemoveFailedPodsArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    excludeOwnerKinds=field(STRINGS, "Skip pods with an owner of these kinds."),
    minPodLifetimeSeconds=field(UINT, "Skip pods younger than this (default 3600)."),
    reasons=field(STRINGS, "Container or pod reasons to match."),
    exitCodes=field(list_of(INT32_T), "Terminated container exit codes to match.", 30),
    includingInitContainers=field(BOOL, "Match init containers too."),
)


#: Upstream's default ``minPodLifetimeSeconds`` (SetDefaults_RemoveFailedPodsArgs).
DEFAULT_MIN_POD_LIFETIME_SECONDS = 3600


class RemoveFailedPodsArgs(NamedTuple):
    """``RemoveFailedPodsArgs`` as upstream reads it (after :func:`defaults`, ``min_pod_lifetime_seconds`` is set)."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    exclude_owner_kinds: tuple[str, ...]
    min_pod_lifetime_seconds: int | None
    reasons: tuple[str, ...]
    exit_codes: tuple[int, ...]
    including_init_containers: bool

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemoveFailedPodsArgs":
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            texts(args.get("excludeOwnerKinds")),
            whole(args.get("minPodLifetimeSeconds")),
            texts(args.get("reasons")),
            integers(args.get("exitCodes")),
            flag(args.get("includingInitContainers")),
        )


def defaults(args: RemoveFailedPodsArgs) -> RemoveFailedPodsArgs:
    """Upstream's SetDefaults: ``minPodLifetimeSeconds`` 3600 when unset."""
    if args.min_pod_lifetime_seconds is not None:
        return args
    return args._replace(min_pod_lifetime_seconds=DEFAULT_MIN_POD_LIFETIME_SECONDS)


def scope(args: RemoveFailedPodsArgs, target: int) -> PodScope:
    """Namespaces, labelSelector and excludeOwnerKinds; only Failed pods are evicted (noted, a manifest is not)."""
    return PodScope(
        args.namespaces,
        label_selector=args.label_selector,
        exclude_owner_kinds=args.exclude_owner_kinds,
        note="RemoveFailedPods evicts only failed pods",
    )


PLUGINS = (
    Plugin(
        "RemoveFailedPods",
        ("deschedule",),
        ARGS,
        validate,
        defaults=defaults,
        decode=RemoveFailedPodsArgs.decode,
        scope=scope,
    ),
)
