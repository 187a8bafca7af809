"""RemovePodsViolatingTopologySpreadConstraint: its validator
(docs/policy-api.md#49-removepodsviolatingtopologyspreadconstraint).

v0.27 checks namespaces and labelSelector and stops at the first error; from v0.28 the errors are aggregated and each
unknown ``constraints`` value is reported, with the allowed set printed the way Go prints a ``sets.Set`` (a map).
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRINGS,
    args_struct,
    field,
)
from desched.plugins.base import Namespaces, Need, Plugin, maybe_flag, namespaced, selector, texts
from desched.validation.core import ArgError, strings
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule
from desched.validation.vocab import TOPOLOGY_CONSTRAINTS

__all__ = ["validate"]

_SUPPORTED = "map[" + " ".join(f"{constraint}:{{}}" for constraint in sorted(TOPOLOGY_CONSTRAINTS)) + "]"


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemovePodsViolatingTopologySpreadConstraintArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    if target >= 28:
        for index, constraint in strings(args.get("constraints")):
            if constraint not in TOPOLOGY_CONSTRAINTS:
                errors.append(ArgError(f"constraint {constraint} is not one of {_SUPPORTED}", ("constraints", index)))
    return first_only(errors, target, aggregated_since=28)


#: ``RemovePodsViolatingTopologySpreadConstraintArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemovePodsViolatingTopologySpreadConstraintArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    includeSoftConstraints=field(BOOL, "Also balance ScheduleAnyway constraints (replaced by constraints).", 27, 27),
    constraints=field(STRINGS, "DoNotSchedule and/or ScheduleAnyway.", 28),
    topologyBalanceNodeFit=field(BOOL, "Check node fit while balancing (default true).", 28),
)


_SOFT_TOO = ("DoNotSchedule", "ScheduleAnyway")


class RemovePodsViolatingTopologySpreadConstraintArgs(NamedTuple):
    """``RemovePodsViolatingTopologySpreadConstraintArgs`` as upstream reads it; ``topology_balance_node_fit`` is
    ``None`` when unset (:func:`defaults` makes it true). v0.27's ``includeSoftConstraints: true`` reads as
    ``constraints: [DoNotSchedule, ScheduleAnyway]`` (the only release knowing it balances hard constraints always,
    soft ones only with it)."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    constraints: tuple[str, ...]
    topology_balance_node_fit: bool | None

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemovePodsViolatingTopologySpreadConstraintArgs":
        constraints = texts(args.get("constraints"))
        if not constraints and args.get("includeSoftConstraints") is True:
            constraints = _SOFT_TOO
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            constraints,
            maybe_flag(args.get("topologyBalanceNodeFit")),
        )


def defaults(
    args: RemovePodsViolatingTopologySpreadConstraintArgs,
) -> RemovePodsViolatingTopologySpreadConstraintArgs:
    """Upstream's SetDefaults: ``topologyBalanceNodeFit`` true when unset, ``constraints`` ``[DoNotSchedule]`` when
    empty."""
    return args._replace(
        constraints=args.constraints or ("DoNotSchedule",),
        topology_balance_node_fit=args.topology_balance_node_fit is not False,
    )


#: To v0.27 the plugin (a strategy before v0.25) lists every namespace with the client, then each one's pods; from
#: v0.28 it groups the informer's pods by namespace.
NEEDS = (
    Need("", "namespaces", ("list",), 20, 27,
         "v0.20.0 pkg/descheduler/strategies/topologyspreadconstraint.go:104; "
         "v0.27.1 pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go:107"),
)  # fmt: skip


PLUGINS = (
    Plugin(
        "RemovePodsViolatingTopologySpreadConstraint",
        ("balance",),
        ARGS,
        validate,
        defaults=defaults,
        decode=RemovePodsViolatingTopologySpreadConstraintArgs.decode,
        scope=namespaced,
        needs=NEEDS,
    ),
)
