"""Convert a ``descheduler/v1alpha1`` policy to ``descheduler/v1alpha2``, as upstream v0.30.2 does, minus its losses.

The algorithm is upstream's ``V1alpha1ToInternal`` (docs/policy-api.md#71-the-algorithm;
``pkg/api/v1alpha1/conversion.go`` and ``strategymigration.go`` at v0.30.2): one profile per enabled strategy, named
``strategy-<Name>-profile``, holding a DefaultEvictor built from the five global evict flags plus the strategy's
``nodeFit`` and priority threshold, and the plugin of the same name with args mapped from ``params``
(:mod:`._strategies`), enabled at its extension point. ``nodeSelector`` and the two per-node/per-namespace limits are
copied to the top level. Profiles are sorted by name (upstream's order is Go's random map order). Each plugin's args go
through v0.30's validator, as upstream's do.

Upstream refuses (``ConversionError`` when ``strict``; the message is upstream's text):

* a strategy name that is not a registered plugin, even when disabled: ``unknown strategy name: <name>`` (a disabled
  ``DefaultEvictor`` key is skipped, since DefaultEvictor is registered; an enabled one fails the same way);
* both ``thresholdPriority`` and ``thresholdPriorityClassName``: ``priority threshold misconfigured for plugin <name>``;
* params failing the validator: ``failed to get plugin config for strategy <name>: strategy "<name>" param validation
  failed: <err>``;
* a value of the wrong type anywhere (a decode error; our text), and ``thresholdPriority`` above 2000000000 (refused
  when the defaults are applied: ``priority threshold can't be greater than 2000000000``).

When several strategies fail, upstream reports whichever its map walk meets first; this port reports the first in
document order.

Differences in the default mode (``upstream_compatible=False``), each with a :class:`Note`:

* ``params.includedTaints`` (RemovePodsViolatingNodeTaints) is carried over into the plugin's args (``carried``);
  upstream drops it silently. It is not carried (``dropped``) when it is an empty list (which in v1alpha2 would match
  no taint) or when ``excludedTaints`` is also set (v1alpha2 forbids both; upstream kept only excludedTaints).
* a top-level ``maxNoOfPodsToEvictTotal`` is carried over (``carried``); upstream drops it.
* ``priorityThreshold: {}``, which upstream writes for every strategy that has params but no priority field, is left
  out: phase D resolves both to 2000000000. Upstream-compatible mode keeps it.
* for ``target >= 34`` the five global flags are written as DefaultEvictor ``podProtections`` (``changed``):
  evictLocalStoragePods, evictDaemonSetPods, evictSystemCriticalPods and evictFailedBarePods switch off
  PodsWithLocalStorage, DaemonSetPods, SystemCriticalPods and FailedBarePods (``defaultDisabled``), ignorePvcPods
  switches on PodsWithPVC (``extraEnabled``); the same protections as the booleans
  (docs/policy-api.md#42-defaultevictor).

In both modes, what the conversion loses is reported with a ``dropped`` note: ``weight``; disabled strategies (and so
their params); ``labelSelector`` on RemoveDuplicates, LowNodeUtilization and HighNodeUtilization; ``targetThresholds``
and ``useDeviationThresholds`` on HighNodeUtilization; params a strategy does not read; ``nodeFit: true`` on PodLifeTime
(forced off, as upstream does); unknown keys (upstream ignores them); and, upstream-compatible, ``includedTaints`` and
``maxNoOfPodsToEvictTotal``.

``target`` is the release the output is for. A field it cannot express (``evictDaemonSetPods`` and ``includedTaints``
before v0.30, ``maxNoOfPodsToEvictTotal`` before v0.31, a PodLifeTime state the release does not know) is a
``ConversionError`` naming the release when ``strict``, and is dropped with a note otherwise. Before v0.28,
TopologySpread's ``constraints``/``topologyBalanceNodeFit`` are written as v0.27's ``includeSoftConstraints`` (v0.27
always checks node fit), with a ``changed`` note.

``merge_profiles`` folds the profiles into one (see :mod:`._merge`); when the evictor args differ nothing is merged and
an ``info`` note says why.

With ``strict=False`` (the linter's mode) nothing raises: unknown strategies are skipped, both priority fields and
params that fail validation are kept, so that v1alpha2 rules report them on the converted policy; values of the wrong
type are read as absent. A ``descheduler/v1alpha2`` document is returned unchanged.

>>> result = convert({"apiVersion": "descheduler/v1alpha1", "strategies": {"RemoveDuplicates": {"enabled": True}}})
>>> [profile["name"] for profile in result.policy["profiles"]]
['strategy-RemoveDuplicates-profile']
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched import versions
from desched.errors import PolicyRefused
from desched.gitops.documents import origin_of as locate
from desched.migrate._decode import POLICY, Decoder, dotted
from desched.migrate._merge import ConvertedProfile, merge
from desched.migrate._strategies import BUILDERS, EXTENSION_POINT, USES, Args, copy_value, is_zero
from desched.plugins import REGISTRY, validate_args
from desched.tree import Path, mapping_or_empty
from desched.validation import aggregate
from desched.validation.core import go_key, path_key
from desched.validation.vocab import LEGACY_FLAG_PROTECTIONS, SYSTEM_CRITICAL_PRIORITY

__all__ = [
    "V1ALPHA1",
    "V1ALPHA2",
    "Conversion",
    "ConversionError",
    "Note",
    "convert",
    "is_v1alpha1",
    "locate",
]


V1ALPHA1 = "descheduler/v1alpha1"
V1ALPHA2 = "descheduler/v1alpha2"
KIND = "DeschedulerPolicy"
EVICTOR = "DefaultEvictor"
#: The release whose converter and validators this mirrors (the last one that read v1alpha1).
UPSTREAM_RELEASE = 30

#: v1alpha1 global flag -> (podProtections list, protection), in upstream's DefaultEvictorArgs literal order.
_FLAGS = {flag: entry for flag, entry in LEGACY_FLAG_PROTECTIONS.items() if flag != "ignorePodsWithoutPDB"}
_PROTECTIONS_SINCE = 34
_LIMITS = ("maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace")
_TOTAL = "maxNoOfPodsToEvictTotal"
_TOTAL_SINCE = 31


class ConversionError(PolicyRefused):
    """What upstream refuses, or what the target release cannot express; ``path`` is in the v1alpha1 source."""


class Note(NamedTuple):
    """Something the user must know: ``kind`` is ``dropped``, ``carried``, ``changed`` or ``info``."""

    kind: str
    message: str
    path: Path


class Conversion(NamedTuple):
    """The v1alpha2 ``policy`` (plain data, keys in writing order), ``notes``, and ``origins`` (output -> source)."""

    policy: dict[str, Any]
    notes: list[Note]
    origins: dict[Path, Path]


def is_v1alpha1(doc: Mapping[str, Any]) -> bool:
    """True when ``doc`` declares ``apiVersion: descheduler/v1alpha1``."""
    return isinstance(doc, Mapping) and doc.get("apiVersion") == V1ALPHA1


def convert(
    source: Mapping[str, Any],
    *,
    upstream_compatible: bool = False,
    target: int = versions.NEWEST,
    merge_profiles: bool = False,
    strict: bool = True,
) -> Conversion:
    """Convert v1alpha1 ``source`` to v1alpha2 for release ``v0.<target>`` (see the module docstring).

    Raises only :class:`ConversionError`, and only when ``strict``.
    """
    return _Run(strict, upstream_compatible, target).run(source, merge_profiles)


class _Run:
    __slots__ = ("decoder", "late", "notes", "release", "strict", "target", "target_errors", "upstream")

    def __init__(self, strict: bool, upstream: bool, target: int) -> None:
        self.strict = strict
        self.upstream = upstream
        self.target = target
        self.release = max(target, versions.OLDEST)
        self.notes: list[Note] = []
        self.late: list[ConversionError] = []
        self.target_errors: list[ConversionError] = []
        self.decoder = Decoder(strict, self._fail, lambda message, path: self.note("dropped", message, path))

    # --- reporting -------------------------------------------------------------------------------------------------

    def note(self, kind: str, message: str, path: Path) -> None:
        self.notes.append(Note(kind, message, path))

    def _fail(self, message: str, path: Path) -> None:
        raise ConversionError(message, path)

    def refuse(self, message: str, path: Path, dropped: str | None = None) -> None:
        """Upstream refuses: raise when strict, else go on (with a ``dropped`` note when something is skipped)."""
        if self.strict:
            raise ConversionError(message, path)
        if dropped is not None:
            self.note("dropped", dropped, path)

    def inexpressible(self, path: Path, what: str, since: int) -> None:
        """``path`` holds something release ``target`` lacks: an error (raised after upstream's) or a dropped note."""
        release = versions.render(self.target)
        if self.strict:
            message = (
                f"{dotted(path)} cannot be expressed for {release}: {what} exists from {versions.render(since)}; "
                f"target {versions.render(since)} or later"
            )
            self.target_errors.append(ConversionError(message, path))
        else:
            self.note(
                "dropped", f"{dotted(path)} was dropped: {release} has no {what} (from {versions.render(since)})", path
            )

    # --- the document -----------------------------------------------------------------------------------------------

    def run(self, source: Mapping[str, Any], merge_profiles: bool) -> Conversion:
        if not isinstance(source, Mapping):
            self.refuse("a DeschedulerPolicy document must be a mapping", ())
            source = {}
        if source.get("apiVersion") == V1ALPHA2 and not self.strict:
            return Conversion(dict(source), [], {})
        self.check_envelope(source)
        decoded = self.decoder.decode(source, POLICY, ())
        doc: dict[str, Any] = mapping_or_empty(decoded)
        profiles = self.profiles(doc)
        policy, origins = self.settings(source, doc)
        if self.late:
            raise self.late[0]
        if self.target_errors:
            raise self.target_errors[0]
        return self.assemble(source, policy, origins, profiles, merge_profiles)

    def check_envelope(self, source: Mapping[str, Any]) -> None:
        """Refuse what upstream refuses about the document as a whole (apiVersion, kind, v1alpha2 fields, target)."""
        api_version = source.get("apiVersion")
        if api_version != V1ALPHA1:
            where: Path = ("apiVersion",) if "apiVersion" in source else ()
            if api_version == V1ALPHA2:
                self.refuse(f"the policy is already {V1ALPHA2}: nothing to convert", where)
            else:
                self.refuse(f"not a {V1ALPHA1} policy (apiVersion: {api_version!r})", where)
        kind = source.get("kind")
        if kind is not None and kind != KIND:
            self.refuse(f'no kind "{kind}" is registered for version "{V1ALPHA1}"', ("kind",))
        if "profiles" in source and self.strict:
            self.refuse(
                '"profiles" is a v1alpha2 field in this v1alpha1 policy (upstream ignores it) and converting would '
                f"lose it: if the policy already has the v1alpha2 shape, set apiVersion: {V1ALPHA2} by hand",
                ("profiles",),
            )
        if self.target < versions.OLDEST:
            self.refuse(
                f"{V1ALPHA2} does not exist in {versions.render(self.target)}: target "
                f"{versions.render(versions.OLDEST)} or later",
                (),
            )

    def profiles(self, doc: dict[str, Any]) -> list[ConvertedProfile]:
        """One profile per enabled strategy (in document order), with the evictor flags carried into each."""
        flags = [flag for flag in _FLAGS if doc.get(flag) is True]
        profiles: list[ConvertedProfile] = []
        strategies = doc.get("strategies")
        for key, strategy in mapping_or_empty(strategies).items():
            profile = self.strategy(go_key(key), ("strategies", path_key(key)), strategy, flags)
            if profile is not None:
                profiles.append(profile)
        if profiles and "evictDaemonSetPods" in flags and self.release < 30:
            self.inexpressible(("evictDaemonSetPods",), "DefaultEvictor evictDaemonSetPods", 30)
        if profiles and flags and not self.upstream and self.release >= _PROTECTIONS_SINCE:
            self.note_protections(flags)
        return profiles

    def settings(self, source: Mapping[str, Any], doc: dict[str, Any]) -> tuple[dict[str, Any], dict[Path, Path]]:
        """The v1alpha2 envelope and policy-level settings, with the origin of each path."""
        policy: dict[str, Any] = {"apiVersion": V1ALPHA2, "kind": KIND}
        origins: dict[Path, Path] = {(): (), ("apiVersion",): ("apiVersion",)}
        if "kind" in source:
            origins[("kind",)] = ("kind",)
        for key in ("nodeSelector", *_LIMITS):
            if key in doc:
                policy[key] = copy_value(doc[key], (key,), (key,), origins)
        if _TOTAL in doc:
            self.total_limit(doc[_TOTAL], policy, origins)
        return policy, origins

    def assemble(
        self,
        source: Mapping[str, Any],
        policy: dict[str, Any],
        origins: dict[Path, Path],
        profiles: list[ConvertedProfile],
        merge_profiles: bool,
    ) -> Conversion:
        """The converted policy: profiles sorted by name (merged into one when asked), origins mapped through."""
        profiles.sort(key=lambda profile: profile.name)
        if merge_profiles:
            profiles, message, merged = merge(profiles, ("strategies",))
            if message is not None:
                self.note("changed" if merged else "info", message, ("strategies",))
        policy["profiles"] = [profile.body for profile in profiles]
        if "strategies" in source:
            origins[("profiles",)] = ("strategies",)
        for index, profile in enumerate(profiles):
            for path, src in profile.origins.items():
                origins[("profiles", index, *path)] = src
        return Conversion(policy, self.notes, origins)

    def total_limit(self, value: Any, policy: dict[str, Any], origins: dict[Path, Path]) -> None:
        path: Path = (_TOTAL,)
        if self.upstream:
            self.note("dropped", f"{_TOTAL} ({value}) was dropped: upstream's v1alpha1 converter ignores it", path)
        elif self.release < _TOTAL_SINCE:
            self.inexpressible(path, _TOTAL, _TOTAL_SINCE)
        else:
            policy[_TOTAL] = copy_value(value, path, path, origins)
            self.note(
                "carried",
                f"{_TOTAL} ({value}) was carried over: upstream's v1alpha1 converter ignored it, so under v1alpha1 "
                "there was no total limit",
                path,
            )

    def note_protections(self, flags: list[str]) -> None:
        lists: dict[str, list[str]] = {}
        for flag in flags:
            kind, protection = _FLAGS[flag]
            lists.setdefault(kind, []).append(protection)
        written = "; ".join(f"{kind}: [{', '.join(values)}]" for kind, values in sorted(lists.items()))
        self.note(
            "changed",
            f"{', '.join(flags)} (true) are written as DefaultEvictor podProtections ({written}) for "
            f"{versions.render(self.target)}: the same protections, without the deprecated booleans",
            (flags[0],),
        )

    # --- one strategy -----------------------------------------------------------------------------------------------

    def strategy(self, name: str, spath: Path, strategy: Any, flags: list[str]) -> ConvertedProfile | None:
        if name not in REGISTRY:
            self.refuse(f"unknown strategy name: {name}", spath, f"{dotted(spath)} was dropped: unknown strategy name")
            return None
        if not isinstance(strategy, dict) or strategy.get("enabled") is not True:
            self.note(
                "dropped",
                f"{dotted(spath)} was dropped: the strategy is not enabled (only enabled: true strategies are "
                "converted; their params are never read)",
                (*spath, "enabled") if isinstance(strategy, dict) and "enabled" in strategy else spath,
            )
            return None
        has_params = isinstance(strategy.get("params"), dict)
        params: dict[str, Any] = strategy["params"] if has_params else {}
        ppath: Path = (*spath, "params")
        node_fit = name != "PodLifeTime" and params.get("nodeFit") is True
        priority = params.get("thresholdPriority")
        class_name = params.get("thresholdPriorityClassName", "")
        if priority is not None and class_name != "":
            self.refuse(f"priority threshold misconfigured for plugin {name}", ppath)
        builder = BUILDERS.get(name)
        if builder is None:  # DefaultEvictor: registered, but not a strategy
            self.refuse(f"unknown strategy name: {name}", spath, f"{dotted(spath)} was dropped: unknown strategy name")
            return None
        args = builder(params, ppath)
        errors = validate_args(name, args.values, UPSTREAM_RELEASE)
        if errors:
            self.refuse(
                f'failed to get plugin config for strategy {name}: strategy "{name}" param validation failed: '
                f"{aggregate([error.message for error in errors])}",
                args.source_of(errors[0].path) or ppath,
            )
        if "weight" in strategy:
            self.note(
                "dropped",
                f"{dotted((*spath, 'weight'))} ({strategy['weight']}) was dropped: the descheduler never used it",
                (*spath, "weight"),
            )
        self.lost_params(name, params, ppath)
        if name == "RemovePodsViolatingNodeTaints":
            self.included_taints(args, params, ppath)
        self.for_target(args)
        if self.strict and isinstance(priority, int) and priority > SYSTEM_CRITICAL_PRIORITY:
            self.late.append(
                ConversionError(
                    f"priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}",
                    (*ppath, "thresholdPriority"),
                )
            )
        args.ordered()

        evictor, evictor_origins = self.evictor(flags, node_fit, has_params, priority, class_name, ppath)
        point = EXTENSION_POINT[name]
        body: dict[str, Any] = {
            "name": f"strategy-{name}-profile",
            "pluginConfig": [{"name": EVICTOR, "args": evictor}, {"name": name, "args": args.values}],
            "plugins": {
                point: {"enabled": [name]},
                "filter": {"enabled": [EVICTOR]},
                "preevictionfilter": {"enabled": [EVICTOR]},
            },
        }
        origins: dict[Path, Path] = {
            (): spath,
            ("name",): spath,
            ("pluginConfig", 0): spath,
            ("pluginConfig", 0, "args"): spath,
            ("pluginConfig", 1): spath,
            ("pluginConfig", 1, "name"): spath,
            ("pluginConfig", 1, "args"): ppath if has_params else spath,
        }
        origins.update({("pluginConfig", 0, "args", *path): src for path, src in evictor_origins.items()})
        origins.update({("pluginConfig", 1, "args", *path): src for path, src in args.origins.items()})
        if "enabled" in strategy:
            origins[("plugins", point, "enabled", 0)] = (*spath, "enabled")
        return ConvertedProfile(body["name"], body, origins)

    def lost_params(self, name: str, params: dict[str, Any], ppath: Path) -> None:
        """``dropped`` notes for every non-zero param the strategy's conversion does not read."""
        for key, value in params.items():
            path: Path = (*ppath, key)
            if key == "nodeFit" and name == "PodLifeTime" and value is True:
                self.note(
                    "dropped",
                    f"{dotted(path)} (true) was dropped: upstream's conversion forces nodeFit off for PodLifeTime",
                    path,
                )
            elif key not in USES[name] and not is_zero(value):
                why = (
                    f"the {name} plugin has no labelSelector argument"
                    if key == "labelSelector"
                    else f"the {name} strategy does not use it"
                )
                self.note("dropped", f"{dotted(path)} was dropped: {why}", path)
        if name == "HighNodeUtilization":
            block = params.get("nodeResourceUtilizationThresholds")
            for key in ("targetThresholds", "useDeviationThresholds"):
                if isinstance(block, dict) and not is_zero(block.get(key)):
                    path = (*ppath, "nodeResourceUtilizationThresholds", key)
                    self.note("dropped", f"{dotted(path)} was dropped: HighNodeUtilization has no {key}", path)

    def included_taints(self, args: Args, params: dict[str, Any], ppath: Path) -> None:
        taints = params.get("includedTaints")
        if taints is None:
            return
        path: Path = (*ppath, "includedTaints")
        where = dotted(path)
        if self.upstream:
            self.note("dropped", f"{where} was dropped: upstream's v1alpha1 converter ignores it", path)
        elif not taints:
            self.note(
                "dropped",
                f"{where} ([]) was dropped: upstream ignored it, and in v1alpha2 an empty includedTaints matches "
                "no taint",
                path,
            )
        elif params.get("excludedTaints"):
            self.note(
                "dropped",
                f"{where} was dropped: v1alpha2 does not allow it together with excludedTaints, and upstream ignored "
                "it (only excludedTaints applied)",
                path,
            )
        else:
            args.copy("includedTaints", taints, path)
            self.note(
                "carried",
                f"{where} was carried over into RemovePodsViolatingNodeTaints args: upstream's v1alpha1 converter "
                "ignored it, so until now every taint was considered; now only these taints are",
                path,
            )

    def for_target(self, args: Args) -> None:
        """Adapt ``args`` to release ``target``: v0.27's TopologySpread form, fields and values it lacks."""
        if args.plugin == "RemovePodsViolatingTopologySpreadConstraint" and self.release < 28:
            soft = "ScheduleAnyway" in args.values.get("constraints", [])
            source = args.origins.get(("constraints",))
            args.remove("constraints")
            args.remove("topologyBalanceNodeFit")
            if soft:
                args.put("includeSoftConstraints", True, source)
            self.note(
                "changed",
                f"{args.plugin} args are written in the {versions.render(self.target)} form (includeSoftConstraints; "
                "that release always checks node fit when balancing domains)",
                source or (),
            )
        fields = REGISTRY[args.plugin].args.fields
        for key in list(args.values):
            field = fields[key]
            if not field.exists_in(self.release):
                src = args.source_of((key,)) or ()
                self.inexpressible(src, f"{args.plugin} {key}", field.since)
                args.remove(key)
        for error in validate_args(args.plugin, args.values, min(self.release, versions.NEWEST)):
            if error.code == "version":
                src = args.source_of(error.path) or ()
                if self.strict:
                    self.target_errors.append(
                        ConversionError(
                            f"{dotted(src)} cannot be expressed for {versions.render(self.target)}: {error.message}",
                            src,
                        )
                    )

    def evictor(
        self,
        flags: list[str],
        node_fit: bool,
        has_params: bool,
        priority: Any,
        class_name: Any,
        ppath: Path,
    ) -> tuple[dict[str, Any], dict[Path, Path]]:
        args: dict[str, Any] = {}
        origins: dict[Path, Path] = {}
        usable = [flag for flag in flags if flag != "evictDaemonSetPods" or self.release >= 30]
        if usable and not self.upstream and self.release >= _PROTECTIONS_SINCE:
            protections: dict[str, list[str]] = {}
            origins[("podProtections",)] = (usable[0],)
            for flag in usable:
                kind, protection = _FLAGS[flag]
                values = protections.setdefault(kind, [])
                origins[("podProtections", kind)] = origins.get(("podProtections", kind), (flag,))
                origins[("podProtections", kind, len(values))] = (flag,)
                values.append(protection)
            args["podProtections"] = {
                kind: protections[kind] for kind in ("defaultDisabled", "extraEnabled") if kind in protections
            }
        else:
            for flag in usable:
                args[flag] = True
                origins[(flag,)] = (flag,)
        if node_fit:
            args["nodeFit"] = True
            origins[("nodeFit",)] = (*ppath, "nodeFit")
        if has_params:
            threshold: dict[str, Any] = {}
            if priority is not None:
                threshold["value"] = priority
                origins[("priorityThreshold", "value")] = (*ppath, "thresholdPriority")
            if isinstance(class_name, str) and class_name:
                threshold["name"] = class_name
                origins[("priorityThreshold", "name")] = (*ppath, "thresholdPriorityClassName")
            if threshold or self.upstream:
                args["priorityThreshold"] = threshold
                origins[("priorityThreshold",)] = ppath
        return args, origins
