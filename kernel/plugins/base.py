"""What a plugin module declares: :class:`Plugin`, one record per registered descheduler plugin."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from desched.policy.types import Type
from desched.validation.core import ArgError

__all__ = ["Check", "Defaults", "Plugin", "copied"]

#: A release-aware check of decoded args (``args``, ``target`` minor release) returning upstream's errors in order.
Check = Callable[[dict[Any, Any], int], list[ArgError]]
#: Upstream's ``SetDefaults_<Plugin>Args``: a new args mapping with the defaults filled in.
Defaults = Callable[[dict[str, Any]], dict[str, Any]]


def copied(args: dict[str, Any]) -> dict[str, Any]:
    """The defaults of a plugin whose ``SetDefaults`` sets nothing: a deep copy of ``args``."""
    return copy.deepcopy(args)


class Plugin(NamedTuple):
    """One descheduler plugin as upstream registers it (``pkg/framework/plugins/<folder>``, ``setupplugins.go``).

    ``extension_points`` are the points it implements (``deschedule``, ``balance``, ``filter``,
    ``preevictionfilter``); ``args`` the shape of its args (decoded strictly); ``validate`` its
    ``Validate<Plugin>Args`` per release; ``construct`` the start-up failures of its constructor that depend on the
    args alone; ``defaults`` its ``SetDefaults``.
    """

    name: str
    extension_points: tuple[str, ...]
    args: Type
    validate: Check
    construct: Check | None = None
    defaults: Defaults = copied

    @property
    def evicts(self) -> bool:
        """True for a deschedule or balance plugin (it chooses pods to evict)."""
        return bool({"deschedule", "balance"} & set(self.extension_points))
