"""KubevirtMigrationAware: an evictor plugin of OpenShift's descheduler build, not upstream's.

It comes from github.com/openshift-virtualization/kubevirt-descheduler-plugins (``plugins/kubevirtmigrationaware``),
which openshift/descheduler registers in ``setupplugins.go`` (``kubevirtplugins.Register``, from release-4.21); the
Kube Descheduler Operator enables it for the KubeVirt profiles. It implements ``Filter`` (no eviction while the VM's
live migration runs) and ``PreEvictionFilter`` (none during a cooldown after one). Its three ``metav1.Duration`` args
are validated as written, before defaulting (``ValidateKubevirtMigrationAwareArgs``: the first error only); a zero or
absent duration then defaults to 15m, 6h and 48h.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desched.api.types import DURATION, args_struct, field
from desched.goduration import format_duration, parse_duration
from desched.plugins.base import Plugin
from desched.validation.core import ArgError

__all__ = ["NAME", "defaults", "validate"]

NAME = "KubevirtMigrationAware"

_MINUTE, _HOUR = 60 * 10**9, 3600 * 10**9
#: ``SetDefaults_KubevirtMigrationAwareArgs``: each field's default, in nanoseconds.
_DEFAULTS = {
    "migrationCooldown": 15 * _MINUTE,
    "maxMigrationCooldown": 6 * _HOUR,
    "migrationHistoryWindow": 48 * _HOUR,
}


def _nanoseconds(args: Mapping[Any, Any], key: str) -> int:
    """The duration at ``key`` as Go holds it: 0 when absent or not a valid duration string (DS004 reports that)."""
    value = args.get(key)
    if not isinstance(value, str):
        return 0
    try:
        return parse_duration(value)
    except ValueError:
        return 0


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateKubevirtMigrationAwareArgs`` (the same in every release): at most one error."""
    cooldown, cap, window = (_nanoseconds(args, key) for key in _DEFAULTS)
    for key, value in (("migrationCooldown", cooldown), ("maxMigrationCooldown", cap)):
        if value < 0:
            return [ArgError(f"{key} must be non-negative, got {format_duration(value)}", (key,))]
    if 0 < cap < cooldown:
        message = (
            f"maxMigrationCooldown ({format_duration(cap)}) must be >= migrationCooldown ({format_duration(cooldown)})"
        )
        return [ArgError(message, ("maxMigrationCooldown",))]
    if window < 0:
        message = f"migrationHistoryWindow must be non-negative, got {format_duration(window)}"
        return [ArgError(message, ("migrationHistoryWindow",))]
    return []


def defaults(args: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaults_KubevirtMigrationAwareArgs``: every zero or absent duration gets its default (a new mapping:
    the plugin's typed args are its args as written)."""
    defaulted = dict(args)
    for key, default in _DEFAULTS.items():
        if _nanoseconds(args, key) == 0:
            defaulted[key] = format_duration(default)
    return defaulted


#: ``KubevirtMigrationAwareArgs`` as the build decodes it (strictly, like upstream's args).
ARGS = args_struct(
    "KubevirtMigrationAwareArgs",
    migrationCooldown=field(DURATION, "Minimum time after a VM's live migration before it may be evicted again."),
    maxMigrationCooldown=field(DURATION, "Cap on the adaptive, backed-off cooldown (0: the 6h default)."),
    migrationHistoryWindow=field(DURATION, "Window over which past migrations count for the backoff."),
)

PLUGINS = (
    Plugin(
        NAME,
        ("filter", "preevictionfilter"),
        ARGS,
        validate,
        defaults=defaults,
    ),
)
