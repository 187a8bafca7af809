"""Everything the operator or the API server rejects in a KubeDescheduler, and what it silently ignores, as
:class:`Problem` values with a path in the CR (docs/openshift-operator.md).

A problem's ``category`` says what kind of problem it is (:class:`Category`): profiles that conflict or repeat, a
spec that is refused, a customisation that is ignored or misleading, or the dry-run mode. Linter rules declare the
categories they report; :data:`REFUSED` are the categories that stop the operator from rendering a policy.
"""

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from desched.openshift import model
from desched.tree import Path

__all__ = ["REFUSED", "Category", "Problem", "problems"]

_CUSTOM = ("spec", "profileCustomizations")


class Category:
    """What kind of problem a :class:`Problem` is."""

    CONFLICT = "conflict"  # profiles the operator refuses together, or one listed twice
    INVALID = "invalid"  # a spec the API server or the operator refuses
    IGNORED = "ignored"  # a customisation silently ignored, or an allowed but misleading combination
    DRY_RUN = "dry-run"  # mode: Predictive evicts nothing


#: The categories that stop the operator from rendering a policy.
REFUSED = frozenset({Category.CONFLICT, Category.INVALID})


class Problem(NamedTuple):
    """One finding about a KubeDescheduler: its category, a message and a path in the CR."""

    category: str
    message: str
    path: Path = ()
    key: bool = False


def _profiles(spec: Mapping[str, Any]) -> list[tuple[int, str]]:
    profiles = spec.get("profiles")
    if not isinstance(profiles, list):
        return []
    return [(index, name) for index, name in enumerate(profiles) if isinstance(name, str)]


def _set(custom: Mapping[str, Any], field: str) -> bool:
    return field in custom and custom[field] is not None


def problems(kd: Mapping[str, Any]) -> list[Problem]:
    """Every problem of the KubeDescheduler object ``kd`` (the whole object, with ``spec``)."""
    return list(_check(kd))


def _check(kd: Mapping[str, Any]) -> Iterator[Problem]:
    yield from _metadata(kd)
    spec = kd.get("spec")
    if not isinstance(spec, Mapping):
        yield Problem(Category.INVALID, "spec is missing or not a mapping: the operator needs profiles and an interval")
        return
    listed = _profiles(spec)
    names = {name for _, name in listed}
    yield from _profile_list(spec, listed)
    yield from _top_level(spec)
    custom = spec.get("profileCustomizations")
    if custom is not None and not isinstance(custom, Mapping):
        yield Problem(Category.INVALID, "profileCustomizations must be a mapping", ("spec", "profileCustomizations"))
    elif isinstance(custom, Mapping):
        yield from _customizations(custom, names)
    yield from _combinations(listed, names)
    yield from _limits(spec)
    mode = spec.get("mode", "Predictive")
    if mode == "Predictive":
        where: Path = ("spec", "mode") if "mode" in spec else ("spec",)
        how = "mode: Predictive" if "mode" in spec else "mode is not set, and defaults to Predictive, which"
        yield Problem(
            Category.DRY_RUN,
            f"{how} runs the descheduler with --dry-run=true: nothing will be evicted (only metrics and logs); "
            "set mode: Automatic to evict",
            where,
        )


def _metadata(kd: Mapping[str, Any]) -> Iterator[Problem]:
    meta = kd.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if name != model.SINGLETON:
        where: Path = ("metadata", "name") if "name" in meta else ()
        yield Problem(
            Category.INVALID,
            f"kubedescheduler is a singleton, .metadata.name must be 'cluster' (got {name!r}): the API server "
            "rejects it",
            where,
        )
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace != model.OPERATOR_NAMESPACE:
        yield Problem(
            Category.IGNORED,
            f"namespace {namespace!r}: the operator reads only {model.OPERATOR_NAMESPACE}/cluster, so this "
            "KubeDescheduler is accepted and silently ignored",
            ("metadata", "namespace"),
        )


def _profile_list(spec: Mapping[str, Any], listed: list[tuple[int, str]]) -> Iterator[Problem]:
    profiles = spec.get("profiles")
    if profiles is not None and not isinstance(profiles, list):
        yield Problem(Category.INVALID, "profiles must be a list of profile names", ("spec", "profiles"))
        return
    if not profiles:
        where: Path = ("spec", "profiles") if "profiles" in spec else ("spec",)
        yield Problem(
            Category.INVALID,
            "descheduler should have at least 1 profile enabled: the operator refuses to render the policy and the "
            "previous configuration keeps running",
            where,
        )
        return
    if len(profiles) > model.MAX_PROFILES:
        yield Problem(
            Category.INVALID, f"at most {model.MAX_PROFILES} profiles are allowed (maxItems)", ("spec", "profiles")
        )
    for index, name in enumerate(profiles):
        if name not in model.PROFILES:
            yield Problem(
                Category.INVALID,
                f"unknown profile {name!r}: the API server rejects it (supported: {', '.join(model.PROFILES)})",
                ("spec", "profiles", index),
            )
    seen: set[str] = set()
    for index, name in listed:
        if name in seen:
            yield Problem(
                Category.CONFLICT,
                f"duplicate profiles are not allowed: {name} is listed twice",
                ("spec", "profiles", index),
            )
        seen.add(name)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _top_level(spec: Mapping[str, Any]) -> Iterator[Problem]:
    interval = spec.get("deschedulingIntervalSeconds")
    if interval is None or not _int(interval) or interval <= 0:
        where: Path = ("spec", "deschedulingIntervalSeconds") if "deschedulingIntervalSeconds" in spec else ("spec",)
        got = "is not set" if interval is None else f"is {interval!r}"
        yield Problem(
            Category.INVALID,
            f"deschedulingIntervalSeconds {got}: descheduler should have an interval set and it should be greater "
            "than 0 (the operator scales the descheduler to 0)",
            where,
        )
    for field, allowed in (
        ("mode", model.MODES),
        ("logLevel", model.LOG_LEVELS),
        ("operatorLogLevel", model.LOG_LEVELS),
    ):
        if field in spec and spec[field] not in allowed:
            yield Problem(
                Category.INVALID,
                f"{field} {spec[field]!r} is not one of {', '.join(repr(v) for v in allowed)}: the API server "
                "rejects it",
                ("spec", field),
            )
    state = spec.get("managementState")
    if state is not None and not (isinstance(state, str) and model.MANAGEMENT_STATE.match(state)):
        yield Problem(
            Category.INVALID,
            f"managementState {state!r} must be Managed, Unmanaged, Force or Removed",
            ("spec", "managementState"),
        )


def _customizations(custom: Mapping[str, Any], names: set[str]) -> Iterator[Problem]:
    rendering = bool(names - set(model.MODIFIERS))
    kubevirt = bool(names & set(model.KUBEVIRT))
    if _set(custom, "thresholdPriority") and _set(custom, "thresholdPriorityClassName"):
        yield Problem(
            Category.INVALID,
            "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
            ".spec.profileCustomizations.ThresholdPriorityClassName fields: the operator refuses to render the "
            "policy and the previous configuration keeps running",
            (*_CUSTOM, "thresholdPriorityClassName"),
        )
    if (
        "thresholdPriority" in custom
        and custom["thresholdPriority"] is not None
        and not _int(custom["thresholdPriority"])
    ):
        yield Problem(Category.INVALID, "thresholdPriority must be an integer", (*_CUSTOM, "thresholdPriority"))
    yield from _namespaces(custom, names)
    for field, allowed in (
        ("devLowNodeUtilizationThresholds", model.LOW_THRESHOLDS),
        ("devDeviationThresholds", {"": 0, **model.DEVIATION_THRESHOLDS}),
        ("devHighNodeUtilizationThresholds", model.HIGH_THRESHOLDS),
    ):
        if field in custom and custom[field] not in allowed:
            choices = ", ".join(repr(v) for v in allowed)
            yield Problem(
                Category.INVALID,
                f"{field} {custom[field]!r} is not one of {choices}: the API server rejects it",
                (*_CUSTOM, field),
            )
    profile = custom.get("devActualUtilizationProfile")
    if _set(custom, "devActualUtilizationProfile") and profile != "" and not _known_prometheus(profile):
        yield Problem(
            Category.INVALID,
            f"unknown prometheus profile: {profile}: supported are {', '.join(model.PROMETHEUS_PROFILES)} (or "
            "query:<PromQL>); the operator refuses to render the policy and the previous configuration keeps running",
            (*_CUSTOM, "devActualUtilizationProfile"),
        )
    if kubevirt and _set(custom, "devLowNodeUtilizationThresholds") and _set(custom, "devDeviationThresholds"):
        yield Problem(
            Category.INVALID,
            "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds customizations can be configured "
            "simultaneously with a KubeVirt profile: the operator refuses to render the policy and the previous "
            "configuration keeps running",
            (*_CUSTOM, "devDeviationThresholds"),
        )
    elif kubevirt and custom.get("devDeviationThresholds") == "":
        yield Problem(
            Category.INVALID,
            'devDeviationThresholds: "" with a KubeVirt profile fails with "unknown Descheduler '
            "DeviationThresholds threshold , only 'Low', 'Medium' and 'High' are supported\"; remove the key",
            (*_CUSTOM, "devDeviationThresholds"),
        )
    yield from _durations(custom)
    for field, users in model.USED_BY.items():
        if _set(custom, field) and not names & set(users):
            yield Problem(
                Category.IGNORED,
                f"{field} is silently ignored: only {', '.join(users)} read it, and none is enabled",
                (*_CUSTOM, field),
                key=True,
            )
    if "devEnableSoftTainter" in custom:
        yield Problem(
            Category.IGNORED,
            "devEnableSoftTainter is deprecated and ignored: the soft-tainter runs with the KubeVirt profiles only",
            (*_CUSTOM, "devEnableSoftTainter"),
            key=True,
        )
    included = custom.get("namespaces", {}).get("included") if isinstance(custom.get("namespaces"), Mapping) else None
    if included and rendering:
        if names & set(model.LNU_FAMILY):
            yield Problem(
                Category.IGNORED,
                "namespaces.included does not apply to LowNodeUtilization: the operator falls back to excluding the "
                "protected namespaces, so it balances pods from every other namespace",
                (*_CUSTOM, "namespaces", "included"),
            )
        if "CompactAndScale" in names:
            yield Problem(
                Category.IGNORED,
                "namespaces.included with CompactAndScale gives HighNodeUtilization no evictableNamespaces at all: it "
                "may evict pods from every namespace, including the protected openshift-* and kube-system ones",
                (*_CUSTOM, "namespaces", "included"),
            )


def _known_prometheus(value: Any) -> bool:
    return isinstance(value, str) and (value in model.PROMETHEUS_PROFILES or value.startswith(model.QUERY_PREFIX))


def _namespaces(custom: Mapping[str, Any], names: set[str]) -> Iterator[Problem]:
    namespaces = custom.get("namespaces")
    if namespaces is None:
        return
    where = (*_CUSTOM, "namespaces")
    if not isinstance(namespaces, Mapping):
        yield Problem(Category.INVALID, "namespaces must be a mapping with included or excluded", where)
        return
    included, excluded = namespaces.get("included"), namespaces.get("excluded")
    for field, value in (("included", included), ("excluded", excluded)):
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            yield Problem(Category.INVALID, f"namespaces.{field} must be a list of namespace names", (*where, field))
            return
    if included and excluded:
        yield Problem(
            Category.INVALID,
            "It is forbidden to combine both included and excluded namespaces: the operator refuses to render the "
            "policy and the previous configuration keeps running",
            (*where, "excluded"),
        )
    for index, namespace in enumerate(included or []):
        if model.is_protected(namespace):
            yield Problem(
                Category.INVALID,
                f"Protected namespace {namespace} included: it is forbidden to include kube-system, hypershift, "
                "openshift or an openshift-* namespace; the operator refuses to render the policy and the previous "
                "configuration keeps running",
                (*where, "included", index),
            )


def _durations(custom: Mapping[str, Any]) -> Iterator[Problem]:
    values: dict[str, int] = {}
    for field in model.DURATIONS:
        if not _set(custom, field):
            continue
        value = custom[field]
        try:
            if not isinstance(value, str):
                raise ValueError
            values[field] = model.parse_duration(value)
        except ValueError:
            yield Problem(
                Category.INVALID,
                f"{field} {value!r} is not a Go duration (use 5m, 24h or 1h30m; days are not supported)",
                (*_CUSTOM, field),
            )
    lifetime = values.get("podLifetime")
    if lifetime is not None and lifetime < 10**9:
        what = "negative: it wraps to a huge number of seconds" if lifetime < 0 else "below one second: it becomes 0"
        yield Problem(Category.IGNORED, f"podLifetime is {what}", (*_CUSTOM, "podLifetime"))
    # A devMaxMigrationCooldown below devMigrationCooldown is rendered as is and refused by OpenShift's descheduler
    # build (KubevirtMigrationAware's validation): DS301 reports it on the rendered policy.


def _combinations(listed: list[tuple[int, str]], names: set[str]) -> Iterator[Problem]:
    first_index: dict[str, int] = {}
    for index, name in listed:
        first_index.setdefault(name, index)
    for rule in model.FORBIDDEN:
        if rule.first in names and rule.second in names:
            later = max(first_index[rule.first], first_index[rule.second])
            yield Problem(
                Category.CONFLICT,
                f"cannot declare {rule.first} and {rule.second} profiles simultaneously: {rule.reason}. The API server "
                "rejects it (KDO 5.3.3+); older operators scale the descheduler to 0",
                ("spec", "profiles", later),
            )
    if "LongLifecycle" in names and "DevPreviewLongLifecycle" in names:
        yield Problem(
            Category.IGNORED,
            "LongLifecycle and DevPreviewLongLifecycle are allowed together, but both render a profile named "
            "LongLifecycle: the policy gets two identical profiles and every eviction is attempted twice",
            ("spec", "profiles", max(first_index["LongLifecycle"], first_index["DevPreviewLongLifecycle"])),
        )
    if "CompactAndScale" in names and "SoftTopologyAndDuplicates" in names:
        yield Problem(
            Category.IGNORED,
            "CompactAndScale with SoftTopologyAndDuplicates is allowed (with TopologyAndDuplicates it is rejected), "
            "but compacting nodes and spreading replicas work against each other",
            ("spec", "profiles", max(first_index["CompactAndScale"], first_index["SoftTopologyAndDuplicates"])),
        )
    kubevirt = [name for name in model.KUBEVIRT if name in names]
    if kubevirt:
        for index, name in listed:
            if name in ("AffinityAndTaints", "TopologyAndDuplicates", "SoftTopologyAndDuplicates"):
                yield Problem(
                    Category.IGNORED,
                    f"{name} with {kubevirt[0]}: the KubeVirt profile sets the policy-wide nodeSelector "
                    f"kubevirt.io/schedulable=true, so {name} only acts on KubeVirt nodes too",
                    ("spec", "profiles", index),
                )
            elif name in model.MODIFIERS:
                others = names - set(model.MODIFIERS) - set(model.KUBEVIRT)
                extra = "" if others else "; no other profile is enabled, so it has no effect at all"
                yield Problem(
                    Category.IGNORED,
                    f"{name} has no effect on {kubevirt[0]}, which always evicts pods with PVCs and local "
                    f"storage{extra}",
                    ("spec", "profiles", index),
                )
    for index, name in listed:
        if name in model.DEPRECATED and name in first_index and first_index[name] == index:
            yield Problem(
                Category.IGNORED,
                f"{name} is deprecated: use {model.DEPRECATED[name]} (it renders the same profile)",
                ("spec", "profiles", index),
            )
    if names and names <= set(model.MODIFIERS) and not kubevirt:
        yield Problem(
            Category.IGNORED,
            f"only modifier profiles ({', '.join(sorted(names))}) are enabled: they only change other profiles, so "
            "the rendered policy has no profiles and nothing is evicted",
            ("spec", "profiles"),
        )


def _limits(spec: Mapping[str, Any]) -> Iterator[Problem]:
    limits = spec.get("evictionLimits")
    if limits is None:
        return
    if not isinstance(limits, Mapping):
        yield Problem(
            Category.INVALID, "evictionLimits must be a mapping with total and/or node", ("spec", "evictionLimits")
        )
        return
    for field in ("total", "node"):
        value = limits.get(field)
        if value is None:
            continue
        where = ("spec", "evictionLimits", field)
        if not _int(value):
            yield Problem(Category.INVALID, f"evictionLimits.{field} must be an integer", where)
        elif value < 0:
            yield Problem(
                Category.IGNORED,
                f"evictionLimits.{field} is negative: the operator casts it to uint, so it wraps to a huge number and "
                "means unlimited",
                where,
            )
        elif value == 0:
            yield Problem(Category.IGNORED, f"evictionLimits.{field}: 0 allows no evictions at all", where)
