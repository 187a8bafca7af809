"""PodLifeTime: ``ValidatePodLifeTimeArgs`` per release (docs/policy-api.md#411-podlifetime).

* v0.27-v0.33 stop at the first error; v0.34 on aggregate them.
* Up to v0.35 ``maxPodLifeTimeSeconds`` is required (``MaxPodLifeTimeSeconds not set``, checked first); v0.36 instead
  requires at least one of ``maxPodLifeTimeSeconds``, ``states``, ``conditions`` or ``exitCodes`` (checked last) and
  adds the ``ownerKinds`` and ``conditions`` rules.
* The accepted ``states`` grow per release (``vocab.PODLIFETIME_STATE_SINCE``). v0.28-v0.33 print the list in Go's
  random set order; this port prints it sorted, which is what v0.27 and v0.34+ print.

A state rejected at ``target`` but accepted by a later release gets ``code="version"``.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    INT32_T,
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRING,
    STRINGS,
    UINT,
    args_struct,
    field,
    list_of,
    struct,
)
from desched.plugins.base import Namespaces, Plugin, PodScope, flag, integers, selector, texts, whole
from desched.validation.core import ArgError, integer, items, length, mapping, string, strings
from desched.validation.gofmt import go_list
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule
from desched.validation.vocab import podlifetime_states
from desched.versions import NEWEST as _NEWEST

__all__ = ["validate"]


def _states_rule(args: dict[Any, Any], target: int) -> ArgError | None:
    allowed = podlifetime_states(target)
    rejected = [(index, state) for index, state in strings(args.get("states")) if state not in allowed]
    if not rejected:
        return None
    newest = podlifetime_states(max(target, _NEWEST))
    code = "version" if all(state in newest for _, state in rejected) else "other"
    return ArgError(f"states must be one of {go_list(allowed)}", ("states", rejected[0][0]), code)


def _conditions_errors(args: dict[Any, Any]) -> list[ArgError]:
    errors = []
    for index, condition in enumerate(items(args.get("conditions")) or []):
        if condition is not None and not isinstance(condition, dict):
            continue
        fields = condition or {}
        if (
            string(fields.get("type")) == ""
            and string(fields.get("status")) == ""
            and string(fields.get("reason")) == ""
            and integer(fields.get("minTimeSinceLastTransitionSeconds")) is None
        ):
            errors.append(
                ArgError(
                    f"conditions[{index}]: at least one of type, status, reason, or minTimeSinceLastTransitionSeconds "
                    "must be set",
                    ("conditions", index),
                )
            )
    return errors


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidatePodLifeTimeArgs`` at release ``target``."""
    errors: list[ArgError] = []
    has_max = integer(args.get("maxPodLifeTimeSeconds")) is not None
    if target <= 35 and not has_max:
        errors.append(ArgError("MaxPodLifeTimeSeconds not set", ("maxPodLifeTimeSeconds",)))
    namespaces = namespaces_rule(args)
    if namespaces is not None:
        errors.append(namespaces)
    if target >= 36:
        owner_kinds = mapping(args.get("ownerKinds"))
        if (
            owner_kinds is not None
            and length(owner_kinds.get("include")) > 0
            and length(owner_kinds.get("exclude")) > 0
        ):
            errors.append(ArgError("only one of Include/Exclude ownerKinds can be set", ("ownerKinds",)))
    selector = label_selector_rule(args, target)
    if selector is not None:
        errors.append(selector)
    states = _states_rule(args, target)
    if states is not None:
        errors.append(states)
    if target >= 36:
        errors.extend(_conditions_errors(args))
        has_filter = (
            has_max
            or length(args.get("states")) > 0
            or length(args.get("conditions")) > 0
            or length(args.get("exitCodes")) > 0
        )
        if not has_filter:
            errors.append(
                ArgError(
                    "at least one filtering criterion must be specified "
                    "(maxPodLifeTimeSeconds, states, conditions, or exitCodes)",
                    (),
                )
            )
    return first_only(errors, target, aggregated_since=34)


#: ``PodLifeTimeArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "PodLifeTimeArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    maxPodLifeTimeSeconds=field(UINT, "Evict pods older than this many seconds."),
    states=field(STRINGS, "Pod phases or container reasons to match."),
    conditions=field(
        list_of(
            struct(
                "PodConditionFilter",
                True,
                type=field(STRING),
                status=field(STRING),
                reason=field(STRING),
                minTimeSinceLastTransitionSeconds=field(UINT),
            )
        ),
        "Pod conditions to match (entries are ORed).",
        36,
    ),
    exitCodes=field(list_of(INT32_T), "Terminated container exit codes to match.", 36),
    ownerKinds=field(
        struct("OwnerKinds", True, include=field(STRINGS), exclude=field(STRINGS)),
        "Owner kinds to include or exclude.",
        36,
    ),
    includingInitContainers=field(BOOL, "Match init containers too.", 31),
    includingEphemeralContainers=field(BOOL, "Match ephemeral containers too.", 31),
)


class PodLifeTimeArgs(NamedTuple):
    """``PodLifeTimeArgs`` as upstream reads it; ``conditions`` keep each filter as written."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    max_pod_life_time_seconds: int | None
    states: tuple[str, ...]
    conditions: tuple[Mapping[str, Any], ...]
    exit_codes: tuple[int, ...]
    owner_kinds: Namespaces
    including_init_containers: bool
    including_ephemeral_containers: bool

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "PodLifeTimeArgs":
        conditions = args.get("conditions")
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            whole(args.get("maxPodLifeTimeSeconds")),
            texts(args.get("states")),
            tuple(item for item in conditions if isinstance(item, Mapping)) if isinstance(conditions, list) else (),
            integers(args.get("exitCodes")),
            Namespaces.decode(args.get("ownerKinds")),
            flag(args.get("includingInitContainers")),
            flag(args.get("includingEphemeralContainers")),
        )


def scope(args: PodLifeTimeArgs, target: int) -> PodScope:
    """Namespaces, labelSelector and, from v0.36, ``ownerKinds``."""
    owner_kinds = args.owner_kinds if ARGS.fields["ownerKinds"].exists_in(target) else Namespaces()
    return PodScope(args.namespaces, label_selector=args.label_selector, owner_kinds=owner_kinds)


PLUGINS = (
    Plugin(
        "PodLifeTime",
        ("deschedule",),
        ARGS,
        validate,
        decode=PodLifeTimeArgs.decode,
        scope=scope,
    ),
)
