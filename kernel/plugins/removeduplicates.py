"""RemoveDuplicates: ``ValidateRemoveDuplicatesArgs`` (docs/policy-api.md#45-removeduplicates): the namespaces rule
only."""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    NAMESPACES_FIELD,
    STRINGS,
    args_struct,
    field,
)
from desched.plugins.base import Namespaces, Plugin, PodScope, texts
from desched.validation.core import ArgError
from desched.validation.shared import namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemoveDuplicatesArgs`` (unchanged since v0.27 but for aggregation, which cannot matter here)."""
    error = namespaces_rule(args)
    return [error] if error is not None else []


#: ``RemoveDuplicatesArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemoveDuplicatesArgs",
    namespaces=NAMESPACES_FIELD,
    excludeOwnerKinds=field(STRINGS, "Skip pods with an owner of these kinds."),
)


class RemoveDuplicatesArgs(NamedTuple):
    """``RemoveDuplicatesArgs`` as upstream reads it."""

    namespaces: Namespaces
    exclude_owner_kinds: tuple[str, ...]

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemoveDuplicatesArgs":
        return cls(Namespaces.decode(args.get("namespaces")), texts(args.get("excludeOwnerKinds")))


def scope(args: RemoveDuplicatesArgs, target: int) -> PodScope:
    """Namespaces and excludeOwnerKinds (no labelSelector); pods without an owner are never duplicates."""
    return PodScope(args.namespaces, exclude_owner_kinds=args.exclude_owner_kinds, owned_only=True)


PLUGINS = (
    Plugin(
        "RemoveDuplicates",
        ("balance",),
        ARGS,
        validate,
        decode=RemoveDuplicatesArgs.decode,
        scope=scope,
    ),
)
