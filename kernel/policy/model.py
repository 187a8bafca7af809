"""The typed policy: immutable records decoded from a v1alpha2 policy tree once its structure has been checked.

Rules that judge what was *written* (unknown keys, wrong types, release gating, duplicate keys) read the raw tree with
positions; everything that judges what the policy *means* reads this model. :func:`decode` never raises: a value of
the wrong type reads as absent, as upstream's decoding would have failed on it and another rule reports that. Every
node carries ``path``, its JSON path in the tree it was decoded from, so findings point at the lines the user wrote.
Plugin args are decoded by their plugin (:attr:`desched.plugins.base.Plugin.decode`) into that plugin's ``Args``;
which plugins exist is the registry :func:`decode` is given (upstream's by default, :data:`desched.plugins.REGISTRY`).

The records are typed ``NamedTuple`` classes rather than dataclasses: as immutable and as checked by mypy, and about
a tenth of the cost to define, which counts on the lint path that pre-commit starts on every commit.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.spec import EXTENSION_POINTS
from desched.plugins import REGISTRY, Plugin
from desched.plugins.base import Namespaces, PodScope
from desched.plugins.defaultevictor import DefaultEvictorArgs
from desched.tree import Path, list_or_empty, mapping_or_empty

__all__ = [
    "ACTIVE_POINTS",
    "EVICTING_POINTS",
    "Path",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Policy",
    "Profile",
    "decode",
]

#: The extension points whose plugins choose pods to evict.
EVICTING_POINTS = ("deschedule", "balance")
#: The extension points upstream runs (``presort`` and ``sort`` are decoded and never run).
ACTIVE_POINTS = ("deschedule", "balance", "filter", "preevictionfilter")


def _count(value: Any) -> int | None:
    """A non-negative integer setting, or ``None`` when absent or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class PluginRef(NamedTuple):
    """One name listed under ``plugins.<point>.enabled`` of a profile, with the plugin registered under it (``None``
    when the registry the policy was decoded with has none)."""

    name: str
    point: str
    path: Path
    plugin: Plugin | None

    @property
    def registered(self) -> bool:
        return self.plugin is not None

    @property
    def implements_point(self) -> bool:
        """True when the plugin is registered and implements the point it is listed under."""
        return self.plugin is not None and self.point in self.plugin.extension_points


class PluginSet(NamedTuple):
    """``plugins.<point>``: the names enabled there, in order (``disabled`` is never read by upstream)."""

    point: str
    enabled: tuple[PluginRef, ...]
    path: Path


class PluginConfig:
    """One ``pluginConfig`` entry: the plugin's name, its args as written and, for a plugin of the registry the
    policy was decoded with, its typed args (:attr:`args`: decoded on first read, since most rules read the args as
    written; ``None`` for an unregistered plugin). Immutable: :meth:`with_args` makes a copy with other typed args."""

    __slots__ = ("_args", "_plugin", "name", "path", "raw_args")

    def __init__(self, name: str, raw_args: Mapping[str, Any], path: Path, plugin: Plugin | None) -> None:
        self.name = name
        self.raw_args = raw_args
        self.path = path
        self._plugin = plugin
        self._args: Any = _UNDECODED

    @property
    def args(self) -> Any:
        """The typed ``<Plugin>Args`` (:attr:`desched.plugins.base.Plugin.decode`), ``None`` when unregistered."""
        if self._args is _UNDECODED:
            self._args = self._plugin.decode(self.raw_args) if self._plugin is not None else None
        return self._args

    @property
    def args_path(self) -> Path:
        return (*self.path, "args")

    def with_args(self, args: Any) -> "PluginConfig":
        """This entry with ``args`` as its typed args (what upstream's defaulting makes of them, say)."""
        other = PluginConfig(self.name, self.raw_args, self.path, self._plugin)
        other._args = args
        return other

    def __repr__(self) -> str:
        return f"PluginConfig({self.name!r}, {self.raw_args!r}, {self.path!r})"


_UNDECODED = object()


class Profile(NamedTuple):
    """One profile: its name, its plugin configs in order and its plugin sets by extension point."""

    name: str
    configs: tuple[PluginConfig, ...]
    plugin_sets: Mapping[str, PluginSet]
    path: Path

    def config(self, plugin: str) -> PluginConfig | None:
        """The first ``pluginConfig`` entry for ``plugin`` (upstream reads the first), if any."""
        for entry in self.configs:
            if entry.name == plugin:
                return entry
        return None

    def enabled(self, *points: str) -> tuple[PluginRef, ...]:
        """Names enabled at ``points`` (every point when none is given), point by point in the order given."""
        chosen = points or EXTENSION_POINTS
        return tuple(ref for point in chosen if point in self.plugin_sets for ref in self.plugin_sets[point].enabled)

    def evicting(self) -> tuple[tuple[PluginRef, PluginConfig | None], ...]:
        """Registered deschedule and balance plugins enabled at a point they implement, with their config."""
        return tuple((ref, self.config(ref.name)) for ref in self.enabled(*EVICTING_POINTS) if ref.implements_point)

    def evictor_args(self) -> DefaultEvictorArgs:
        """The typed args of the profile's DefaultEvictor (upstream's defaults when it has no entry)."""
        config = self.config("DefaultEvictor")
        args = config.args if config is not None else None
        return args if isinstance(args, DefaultEvictorArgs) else DefaultEvictorArgs()

    def pod_scopes(self, target: int) -> list[tuple[str, PodScope]]:
        """``(name, PodScope)`` of each plugin :meth:`evicting` lists, once each, in the order they are enabled: what
        its args (its first ``pluginConfig`` entry, else its args decoded from ``{}``) say about the pods it may
        evict at release ``target``. A plugin declaring no scope hook (the registry's tests refuse that for an
        evicting plugin) may evict every pod."""
        scopes: dict[str, PodScope] = {}
        for ref, config in self.evicting():
            plugin = ref.plugin
            if plugin is None or ref.name in scopes:
                continue
            args = config.args if config is not None and config.args is not None else plugin.decode({})
            scopes[ref.name] = plugin.scope(args, target) if plugin.scope is not None else PodScope(Namespaces())
        return list(scopes.items())


class Policy(NamedTuple):
    """A v1alpha2 DeschedulerPolicy: its profiles and the policy-level settings upstream reads."""

    profiles: tuple[Profile, ...]
    node_selector: str | None = None
    max_pods_to_evict_per_node: int | None = None
    max_pods_to_evict_per_namespace: int | None = None
    max_pods_to_evict_total: int | None = None
    eviction_failure_event_notification: bool = False
    grace_period_seconds: int | None = None
    path: Path = ()

    def profile_named(self, name: str) -> Profile | None:
        return next((profile for profile in self.profiles if profile.name == name), None)


def _plugin_set(point: str, value: Any, path: Path, registry: Mapping[str, Plugin]) -> PluginSet:
    enabled = mapping_or_empty(value).get("enabled")
    refs = tuple(
        PluginRef(name, point, (*path, "enabled", index), registry.get(name))
        for index, name in enumerate(list_or_empty(enabled))
        if isinstance(name, str)
    )
    return PluginSet(point, refs, path)


def _config(value: Mapping[str, Any], path: Path, registry: Mapping[str, Plugin]) -> PluginConfig:
    name = value["name"]
    raw = mapping_or_empty(value.get("args"))
    return PluginConfig(name, raw, path, registry.get(name))


def _profile(value: Mapping[str, Any], path: Path, registry: Mapping[str, Plugin]) -> Profile:
    name = value.get("name")
    entries = value.get("pluginConfig")
    configs = tuple(
        _config(entry, (*path, "pluginConfig", index), registry)
        for index, entry in enumerate(list_or_empty(entries))
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str)
    )
    plugins = mapping_or_empty(value.get("plugins"))
    sets = {
        point: _plugin_set(point, plugins[point], (*path, "plugins", point), registry)
        for point in EXTENSION_POINTS
        if point in plugins
    }
    return Profile(name if isinstance(name, str) else "", configs, sets, path)


def decode(tree: Mapping[str, Any], path: Path = (), registry: Mapping[str, Plugin] = REGISTRY) -> Policy:
    """The model of the v1alpha2 policy ``tree`` (decoded YAML, with or without positions) for a descheduler build
    that registers ``registry``'s plugins; never raises."""
    profiles = tree.get("profiles")
    selector = tree.get("nodeSelector")
    return Policy(
        tuple(
            _profile(profile, (*path, "profiles", index), registry)
            for index, profile in enumerate(list_or_empty(profiles))
            if isinstance(profile, Mapping)
        ),
        selector if isinstance(selector, str) else None,
        _count(tree.get("maxNoOfPodsToEvictPerNode")),
        _count(tree.get("maxNoOfPodsToEvictPerNamespace")),
        _count(tree.get("maxNoOfPodsToEvictTotal")),
        tree.get("evictionFailureEventNotification") is True,
        _count(tree.get("gracePeriodSeconds")),
        path,
    )
