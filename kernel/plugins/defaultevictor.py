"""DefaultEvictor: ``ValidateDefaultEvictorArgs`` and the checks ``New`` makes at start-up
(docs/policy-api.md#42-defaultevictor).

Releases: v0.27 rejects any non-empty ``priorityThreshold.name`` (it forgot to look at ``value``); v0.28-v0.33 reject
``value`` and ``name`` together, printing the whole args struct with ``%v``; v0.34 aggregates all errors and adds
``noEvictionPolicy`` and ``podProtections``; v0.35 adds ``podProtections.config`` and ``namespaceLabelSelector``.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    DURATION,
    LABEL_SELECTOR,
    PRIORITY_THRESHOLD,
    STRING,
    STRINGS,
    UINT,
    args_struct,
    field,
    list_of,
    struct,
)
from desched.plugins.base import Need, Plugin, Setting, When, flag, raw, selector, texts, whole
from desched.validation.core import ArgError, boolean, integer, items, length, mapping, string, strings
from desched.validation.gofmt import go_list, go_quote, go_quoted_list
from desched.validation.labels import label_selector_problem, parse_label_selector_string
from desched.validation.vocab import DEFAULT_POD_PROTECTIONS, EXTRA_POD_PROTECTIONS, NO_EVICTION_POLICIES

__all__ = ["DefaultEvictorArgs", "PodProtections", "PriorityThreshold", "construct", "validate"]

PLUGIN_NAME = "DefaultEvictor"

DEPRECATED_FLAGS = (
    "evictLocalStoragePods",
    "evictDaemonSetPods",
    "evictSystemCriticalPods",
    "ignorePvcPods",
    "evictFailedBarePods",
    "ignorePodsWithoutPDB",
)

# Go field order of DefaultEvictorArgs per release, for the `got %v` of the v0.27-v0.33 priority message:
# (json key, kind) where kind is "string", "bool", "uint" or "pointer".
_Fields = tuple[tuple[str, str], ...]

_FIELDS_V27: _Fields = (
    ("nodeSelector", "string"),
    ("evictLocalStoragePods", "bool"),
    ("evictSystemCriticalPods", "bool"),
    ("ignorePvcPods", "bool"),
    ("evictFailedBarePods", "bool"),
    ("labelSelector", "pointer"),
    ("priorityThreshold", "pointer"),
    ("nodeFit", "bool"),
)
_FIELDS_V30: _Fields = (
    ("nodeSelector", "string"),
    ("evictLocalStoragePods", "bool"),
    ("evictDaemonSetPods", "bool"),
    ("evictSystemCriticalPods", "bool"),
    ("ignorePvcPods", "bool"),
    ("evictFailedBarePods", "bool"),
    ("labelSelector", "pointer"),
    ("priorityThreshold", "pointer"),
    ("nodeFit", "bool"),
    ("minReplicas", "uint"),
)
_FIELDS_V31: _Fields = (*_FIELDS_V30, ("minPodAge", "pointer"))
_FIELDS_V32: _Fields = (*_FIELDS_V31, ("ignorePodsWithoutPDB", "bool"))

#: What Go prints for a non-nil pointer field; the real text is a heap address no offline tool can know.
POINTER_PLACEHOLDER = "0x…"


def _go_struct_v(args: dict[Any, Any], target: int) -> str:
    """``%v`` of ``*DefaultEvictorArgs`` (TypeMeta is empty after decoding into the internal type)."""
    if target >= 32:
        fields = _FIELDS_V32
    elif target >= 31:
        fields = _FIELDS_V31
    elif target >= 30:
        fields = _FIELDS_V30
    else:
        fields = _FIELDS_V27
    parts = ["{ }"]
    for key, kind in fields:
        value = args.get(key)
        if kind == "string":
            parts.append(string(value))
        elif kind == "bool":
            parts.append("true" if boolean(value) else "false")
        elif kind == "uint":
            parts.append(str(integer(value) or 0))
        else:
            parts.append("<nil>" if value is None else POINTER_PLACEHOLDER)
    return "&{" + " ".join(parts) + "}"


def _priority_rule(args: dict[Any, Any], target: int) -> ArgError | None:
    threshold = mapping(args.get("priorityThreshold"))
    if threshold is None:
        return None
    name_set = len(string(threshold.get("name"))) > 0
    value_set = integer(threshold.get("value")) is not None
    if target >= 34:
        if value_set and name_set:
            return ArgError(
                "priority threshold misconfigured, only one of priorityThreshold fields can be set",
                ("priorityThreshold",),
                "priority",
            )
        return None
    if name_set and (value_set or target <= 27):
        return ArgError(
            "priority threshold misconfigured, only one of priorityThreshold fields can be set, got "
            + _go_struct_v(args, target),
            ("priorityThreshold",),
            "priority",
        )
    return None


def _pod_protection_errors(args: dict[Any, Any], target: int) -> list[ArgError]:
    protections = mapping(args.get("podProtections")) or {}
    extra = protections.get("extraEnabled")
    disabled = protections.get("defaultDisabled")
    errors: list[ArgError] = []
    has_deprecated = any(boolean(args.get(flag)) for flag in DEPRECATED_FLAGS)
    uses_new_model = length(extra) > 0 or length(disabled) > 0
    if has_deprecated and uses_new_model:
        errors.append(
            ArgError(
                "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or PodProtections.DefaultDisabled",
                ("podProtections",),
            )
        )
    if not uses_new_model:
        return errors
    for values, key, label, valid in (
        (extra, "extraEnabled", "ExtraEnabled", EXTRA_POD_PROTECTIONS),
        (disabled, "defaultDisabled", "DefaultDisabled", DEFAULT_POD_PROTECTIONS),
    ):
        for index, policy in strings(values):
            if policy not in valid:
                errors.append(
                    ArgError(
                        f"invalid pod protection policy in {label}: {go_quote(policy)}. "
                        f"Valid options are: {go_list(valid)}",
                        ("podProtections", key, index),
                    )
                )
    duplicate = _first_duplicate(disabled)
    if duplicate is not None:
        errors.append(
            ArgError(
                "PodProtections.DefaultDisabled contains duplicate entries",
                ("podProtections", "defaultDisabled", duplicate),
            )
        )
    duplicate = _first_duplicate(extra)
    if duplicate is not None:
        errors.append(
            ArgError(
                "PodProtections.ExtraEnabled contains duplicate entries", ("podProtections", "extraEnabled", duplicate)
            )
        )
    if target >= 35 and any(policy == "PodsWithPVC" for _, policy in strings(extra)):
        config = mapping(protections.get("config")) or {}
        pvc = mapping(config.get("PodsWithPVC"))
        if pvc is not None:
            for index, storage_class in enumerate(items(pvc.get("protectedStorageClasses")) or []):
                if storage_class is not None and not isinstance(storage_class, dict):
                    continue
                if string((storage_class or {}).get("name")) == "":
                    errors.append(
                        ArgError(
                            f"PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[{index}] name cannot be empty",
                            ("podProtections", "config", "PodsWithPVC", "protectedStorageClasses", index),
                        )
                    )
    return errors


def _first_duplicate(values: Any) -> int | None:
    seen: set[str] = set()
    for index, value in strings(values):
        if value in seen:
            return index
        seen.add(value)
    return None


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateDefaultEvictorArgs`` at release ``target``: all errors in upstream's order."""
    errors: list[ArgError] = []
    priority = _priority_rule(args, target)
    if priority is not None:
        errors.append(priority)
    if target < 34:
        return errors
    policy = string(args.get("noEvictionPolicy"))
    if policy and policy not in NO_EVICTION_POLICIES:
        errors.append(
            ArgError(
                f"noEvictionPolicy accepts only {go_quoted_list(NO_EVICTION_POLICIES)} values", ("noEvictionPolicy",)
            )
        )
    errors.extend(_pod_protection_errors(args, target))
    return errors


def construct(args: dict[Any, Any], target: int) -> list[ArgError]:
    """Start-up failures of ``New`` (phase E) plus the run-time ``nodeSelector`` parse that ``nodeFit`` triggers.

    ``New`` stops at its first failure, so at most one selector conversion error is returned; a ``nodeSelector``
    parse error (logged on every PreEvictionFilter call when ``nodeFit`` is true) is reported next to it.
    """
    errors: list[ArgError] = []
    problem = label_selector_problem(args.get("labelSelector"), target)
    if problem is not None:
        message = problem[0] if target >= 34 else "could not get selector from label selector"
        errors.append(ArgError(message, ("labelSelector", *problem[1])))
    if not errors and target >= 35:
        namespace_selector = mapping(args.get("namespaceLabelSelector"))
        if namespace_selector is not None and (
            length(namespace_selector.get("matchLabels")) > 0 or length(namespace_selector.get("matchExpressions")) > 0
        ):
            problem = label_selector_problem(namespace_selector, target)
            if problem is not None:
                errors.append(
                    ArgError(
                        "unable to convert namespaceLabelSelector to label selector: " + problem[0],
                        ("namespaceLabelSelector", *problem[1]),
                    )
                )
    if boolean(args.get("nodeFit")):
        node_selector = string(args.get("nodeSelector"))
        parse_error = parse_label_selector_string(node_selector, target)
        if parse_error is not None:
            errors.append(ArgError(parse_error, ("nodeSelector",)))
    return errors


#: ``DefaultEvictorArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "DefaultEvictorArgs",
    nodeSelector=field(STRING, "Candidate nodes for nodeFit (label selector string)."),
    labelSelector=field(LABEL_SELECTOR, "Only pods whose labels match are evictable."),
    namespaceLabelSelector=field(LABEL_SELECTOR, "Only pods in namespaces whose labels match are evictable.", 35),
    priorityThreshold=field(PRIORITY_THRESHOLD, "Pods at or above this priority are not evicted."),
    nodeFit=field(BOOL, "Evict only pods that fit on another node."),
    minReplicas=field(UINT, "Evict only pods whose owner has at least this many pods.", 30),
    minPodAge=field(DURATION, "Evict only pods started at least this long ago.", 31),
    noEvictionPolicy=field(STRING, '"", Preferred or Mandatory: how the prefer-no-eviction annotation counts.', 34),
    podProtections=field(
        struct(
            "PodProtections",
            True,
            extraEnabled=field(STRINGS, "Extra protections to switch on."),
            defaultDisabled=field(STRINGS, "Default protections to switch off."),
            config=field(
                struct(
                    "PodProtectionsConfig",
                    True,
                    PodsWithPVC=field(
                        struct(
                            "PodsWithPVCConfig",
                            True,
                            protectedStorageClasses=field(
                                list_of(struct("ProtectedStorageClass", True, name=field(STRING))),
                                "Storage classes whose PVCs protect a pod.",
                            ),
                        )
                    ),
                ),
                "Per-protection configuration.",
                35,
            ),
        ),
        "Pod protections (replaces the deprecated booleans).",
        34,
    ),
    evictLocalStoragePods=field(BOOL, "Deprecated: disable PodsWithLocalStorage."),
    evictDaemonSetPods=field(BOOL, "Deprecated: disable DaemonSetPods.", 30),
    evictSystemCriticalPods=field(BOOL, "Deprecated: disable SystemCriticalPods."),
    ignorePvcPods=field(BOOL, "Deprecated: enable PodsWithPVC."),
    ignorePodsWithoutPDB=field(BOOL, "Deprecated: enable PodsWithoutPDB.", 32),
    evictFailedBarePods=field(BOOL, "Deprecated: disable FailedBarePods."),
)


class PriorityThreshold(NamedTuple):
    """``priorityThreshold``: a value, or the name of a PriorityClass (``""``: none)."""

    value: int | None
    name: str


class PodProtections(NamedTuple):
    """``podProtections``; ``protected_storage_classes`` names the classes of ``config.PodsWithPVC`` (``None`` when
    none are listed: every PVC protects)."""

    extra_enabled: tuple[str, ...] = ()
    default_disabled: tuple[str, ...] = ()
    protected_storage_classes: tuple[str, ...] | None = None

    @classmethod
    def decode(cls, value: Any) -> "PodProtections":
        table = raw(value) or {}
        pvc = raw((raw(table.get("config")) or {}).get("PodsWithPVC")) or {}
        listed = pvc.get("protectedStorageClasses")
        classes = None
        if isinstance(listed, list) and listed:
            names = ((raw(item) or {}).get("name") for item in listed)
            classes = tuple(name for name in names if isinstance(name, str))
        return cls(texts(table.get("extraEnabled")), texts(table.get("defaultDisabled")), classes)


class DefaultEvictorArgs(NamedTuple):
    """``DefaultEvictorArgs`` as upstream reads it. ``legacy_flags`` holds the deprecated booleans written ``true``
    (by JSON name); ``min_pod_age`` is the duration as written; ``min_replicas`` is 0 when unset."""

    node_selector: str = ""
    label_selector: Mapping[str, Any] | None = None
    namespace_label_selector: Mapping[str, Any] | None = None
    priority_threshold: PriorityThreshold | None = None
    node_fit: bool = False
    min_replicas: int = 0
    min_pod_age: str | None = None
    no_eviction_policy: str = ""
    pod_protections: PodProtections = PodProtections()
    legacy_flags: frozenset[str] = frozenset()

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "DefaultEvictorArgs":
        if not args:
            return _NO_ARGS
        get = args.get
        threshold, protections, min_pod_age = raw(get("priorityThreshold")), get("podProtections"), get("minPodAge")
        return cls(
            string(get("nodeSelector")),
            selector(get("labelSelector")),
            selector(get("namespaceLabelSelector")),
            None
            if threshold is None
            else PriorityThreshold(whole(threshold.get("value")), string(threshold.get("name"))),
            flag(get("nodeFit")),
            whole(get("minReplicas")) or 0,
            min_pod_age if isinstance(min_pod_age, str) else None,
            string(get("noEvictionPolicy")),
            _NO_PROTECTIONS if protections is None else PodProtections.decode(protections),
            frozenset(name for name in _DEPRECATED & args.keys() if flag(args[name])),
        )


_NO_ARGS = DefaultEvictorArgs()
_NO_PROTECTIONS = PodProtections()
_DEPRECATED = frozenset(DEPRECATED_FLAGS)


def _threshold_class(setting: Setting, args: DefaultEvictorArgs) -> bool:
    """``priorityThreshold`` names a PriorityClass, whose value upstream GETs (a ``value`` wins over the name)."""
    threshold = args.priority_threshold
    return threshold is not None and bool(threshold.name) and threshold.value is None


def _namespace_labels(setting: Setting, args: DefaultEvictorArgs) -> bool:
    return bool((args.namespace_label_selector or {}).get("matchLabels"))


def _namespace_selector(setting: Setting, args: DefaultEvictorArgs) -> bool:
    selector = args.namespace_label_selector or {}
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def _pods_without_pdb(setting: Setting, args: DefaultEvictorArgs) -> bool:
    return "ignorePodsWithoutPDB" in args.legacy_flags or "PodsWithoutPDB" in args.pod_protections.extra_enabled


#: What the options ask of the API: a named priority threshold's PriorityClass (with the real client, --dry-run
#: too: from v0.27 when the policy is loaded), the namespaces of a ``namespaceLabelSelector`` and, for the
#: PodsWithoutPDB protection, PodDisruptionBudgets.
NEEDS = (
    Need("scheduling.k8s.io", "priorityclasses", ("get",), 0, None,
         "v0.22.1 pkg/utils/priority.go:47; v0.26.1 pkg/descheduler/descheduler.go:330-345; "
         "v0.27.1 pkg/descheduler/policyconfig.go:75,128, descheduler.go:70; v0.36.0 policyconfig.go:73,134",
         When("priorityThreshold.name", _threshold_class)),
    Need("", "namespaces", ("list", "watch"), 35, 35,
         "v0.35.0 pkg/framework/plugins/defaultevictor/defaultevictor.go:93-99",
         When("namespaceLabelSelector.matchLabels", _namespace_labels)),
    Need("", "namespaces", ("list", "watch"), 36, None,
         "v0.36.0 pkg/framework/plugins/defaultevictor/defaultevictor.go:93-99",
         When("namespaceLabelSelector with matchLabels or matchExpressions", _namespace_selector)),
    # v0.35-v0.36 read the lister only once the informers started, so no request is sent and every pod counts as
    # uncovered (upstream #1882; PR #1883 registers the informer at start-up): the grant is still what it needs
    Need("policy", "poddisruptionbudgets", ("list", "watch"), 32, None,
         "v0.32.0 pkg/framework/plugins/defaultevictor/defaultevictor.go:201; v0.36.0 :353",
         When("ignorePodsWithoutPDB or podProtections.extraEnabled PodsWithoutPDB", _pods_without_pdb)),
)  # fmt: skip


PLUGINS = (
    Plugin(
        "DefaultEvictor",
        ("filter", "preevictionfilter"),
        ARGS,
        validate,
        construct=construct,
        decode=DefaultEvictorArgs.decode,
        needs=NEEDS,
    ),
)
