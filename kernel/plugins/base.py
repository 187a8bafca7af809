"""What a plugin module declares: :class:`Plugin`, one record per registered descheduler plugin."""

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from desched.api.types import Type
from desched.validation.core import ArgError

__all__ = [
    "Check",
    "Decode",
    "Defaults",
    "Namespaces",
    "Need",
    "Place",
    "Plugin",
    "PodScope",
    "ScopeOf",
    "Setting",
    "When",
    "anywhere",
    "as_written",
    "flag",
    "integers",
    "maybe_flag",
    "namespaced",
    "percentages",
    "raw",
    "selector",
    "texts",
    "unchanged",
    "whole",
]

#: A release-aware check of decoded args (``args``, ``target`` minor release) returning upstream's errors in order.
Check = Callable[[dict[Any, Any], int], list[ArgError]]
#: Upstream's ``SetDefaults_<Plugin>Args`` on the typed args: the args with the defaults filled in (a new record).
Defaults = Callable[[Any], Any]


#: The typed ``<Plugin>Args`` of a plugin's args as written (never raises; odd values read as absent).
Decode = Callable[[Mapping[str, Any]], Any]


def unchanged(args: Any) -> Any:
    """The defaults of a plugin whose ``SetDefaults`` sets nothing: the typed args themselves (they are immutable)."""
    return args


def as_written(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The decoding of a plugin without a typed args class: the mapping as written."""
    return args


# --- what a descheduler asks of the Kubernetes API (its RBAC), per release: desched.deployment.access resolves it --


class Setting(NamedTuple):
    """What decides which needs apply to one descheduler: its release (minor, 36 for v0.36), ``--dry-run``,
    ``--leader-elect``, its other flags' values by name, the namespace its pod runs in (``None``: unknown) and the
    v1alpha2 policy tree it runs (empty when unknown)."""

    release: int
    dry_run: bool = False
    leader_elect: bool = False
    flags: Mapping[str, str] = MappingProxyType({})
    namespace: str | None = None
    policy: Mapping[str, Any] = MappingProxyType({})


class When(NamedTuple):
    """A need's condition: ``text`` says it, ``holds`` decides it from the :class:`Setting` and, for a plugin's need,
    the plugin's typed args with upstream's defaults applied (``None`` for a need of the core)."""

    text: str
    holds: Callable[[Setting, Any], bool]


ALWAYS = When("always", lambda setting, args: True)

#: Where a need's verbs apply in a setting: ``(namespace, name)``; ``None`` for every namespace (cluster-scoped
#: resources included) or every object.
Place = Callable[[Setting], tuple[str | None, str | None]]


def anywhere(setting: Setting) -> tuple[str | None, str | None]:
    """Cluster-wide, on every object."""
    return None, None


class Need(NamedTuple):
    """``verbs`` on ``resource`` of API ``group`` (``""``: core) that the descheduler sends from release ``first`` to
    ``last`` (minors, inclusive; ``0``: from the first release, ``None``: still at the newest) when ``when`` holds,
    at ``where``. ``evidence`` is where the code sends them (upstream's ``v0.NN.P file:line``). ``fatal``: without
    the grant the run fails, stalls or never leads; otherwise it only loses a best-effort write (Events)."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    first: int
    last: int | None
    evidence: str
    when: When = ALWAYS
    where: Place = anywhere
    fatal: bool = True

    def applies(self, setting: Setting, args: Any = None) -> bool:
        """Whether the descheduler of ``setting`` sends these requests (``args``: see :class:`When`)."""
        in_release = self.first <= setting.release and (self.last is None or setting.release <= self.last)
        return in_release and self.when.holds(setting, args)


class Plugin(NamedTuple):
    """One descheduler plugin as upstream registers it (``pkg/framework/plugins/<folder>``, ``setupplugins.go``).

    ``extension_points`` are the points it implements (``deschedule``, ``balance``, ``filter``,
    ``preevictionfilter``); ``args`` the shape of its args (decoded strictly); ``validate`` its
    ``Validate<Plugin>Args`` per release; ``construct`` the start-up failures of its constructor that depend on the
    args alone; ``defaults`` its ``SetDefaults`` and ``decode`` its typed args, both on what ``decode`` returns;
    ``scope`` (every evicting plugin declares one) what its args say about the pods it may evict; ``needs`` what it
    asks of the API beyond the descheduler's core (``desched.deployment.access.CORE``), per release and args (empty:
    nothing more, as for most plugins: they read the core's informers).
    """

    name: str
    extension_points: tuple[str, ...]
    args: Type
    validate: Check
    construct: Check | None = None
    defaults: Defaults = unchanged
    decode: Decode = as_written
    scope: "ScopeOf | None" = None
    needs: tuple[Need, ...] = ()

    @property
    def evicts(self) -> bool:
        """True for a deschedule or balance plugin (it chooses pods to evict)."""
        return bool({"deschedule", "balance"} & set(self.extension_points))


# --- decoding args as upstream's Go decoding would have read them (after the structural rules have spoken) ------


def flag(value: Any) -> bool:
    """A Go ``bool``: true only when written ``true``."""
    return value is True


def maybe_flag(value: Any) -> bool | None:
    """A Go ``*bool``: the boolean written, else ``None`` (unset)."""
    return value if isinstance(value, bool) else None


def whole(value: Any) -> int | None:
    """A Go integer that may be unset: the integer, else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def texts(value: Any) -> tuple[str, ...]:
    """A Go ``[]string``: the strings of a list, in order."""
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def integers(value: Any) -> tuple[int, ...]:
    """A Go ``[]int32``: the integers of a list, in order."""
    return tuple(item for item in value if whole(item) is not None) if isinstance(value, list) else ()


def raw(value: Any) -> Mapping[str, Any] | None:
    """A nested struct kept as written (a mapping), or ``None`` when absent or not a mapping."""
    return value if isinstance(value, Mapping) else None


def percentages(value: Any) -> dict[str, float]:
    """A ``ResourceThresholds`` map: resource name -> percentage, for the entries that are numbers."""
    table = raw(value) or {}
    return {
        str(name): float(percent)
        for name, percent in table.items()
        if isinstance(percent, (int, float)) and not isinstance(percent, bool)
    }


selector = raw  # a metav1.LabelSelector is compiled where it is used (desched.workloads.selectors)


class Namespaces(NamedTuple):
    """``namespaces`` / ``evictableNamespaces``: include or exclude lists (upstream allows one of them)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def decode(cls, value: Any) -> "Namespaces":
        table = raw(value) or {}
        return cls(texts(table.get("include")), texts(table.get("exclude")))


class PodScope(NamedTuple):
    """What a plugin's own args say about which pods it may evict, as the scope model reads them
    (docs/policy-api.md#3-profiles): its namespaces (under ``namespaces_key`` in the args), its label selector
    (``None``: every pod, also for a plugin without one), the owner kinds it skips, PodLifeTime's ``ownerKinds``,
    whether it skips pods without an owner (RemoveDuplicates), and a note for every verdict (``""``: none)."""

    namespaces: Namespaces
    namespaces_key: str = "namespaces"
    label_selector: Mapping[str, Any] | None = None
    exclude_owner_kinds: tuple[str, ...] = ()
    owner_kinds: Namespaces = Namespaces()
    owned_only: bool = False
    note: str = ""


#: A plugin's scope hook: the :class:`PodScope` of its typed args at a release (``target``, e.g. 36 for v0.36).
ScopeOf = Callable[[Any, int], PodScope]


def namespaced(args: Any, target: int) -> PodScope:
    """The scope of a plugin whose args filter pods by ``namespaces`` and ``labelSelector`` alone."""
    return PodScope(args.namespaces, label_selector=args.label_selector)
