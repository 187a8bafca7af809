"""Every forbidden pair and every rejecting or flagging rule of the
docs/openshift-operator.md#3-what-the-operator-or-the-api-server-refuses-or-ignores), table-driven."""

from __future__ import annotations

import itertools

import pytest

from desched.linter import rules
from desched.openshift import FORBIDDEN, Problem, problems
from desched.openshift.model import KUBEVIRT, PROFILES, format_duration, parse_duration


def kd(spec: dict, **meta: str) -> dict:
    metadata = {"name": "cluster", "namespace": "openshift-kube-descheduler-operator", **meta}
    return {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler", "metadata": metadata, "spec": spec}


def spec(profiles: list[str], **extra: object) -> dict:
    return {"mode": "Automatic", "deschedulingIntervalSeconds": 3600, "profiles": profiles, **extra}


# The rule that reports each category, from the rules' own metadata: the tables below name rules, as users see them.
REPORTED_BY = {
    module.OPENSHIFT_CATEGORY: module.ID for module in rules.all_rules() if hasattr(module, "OPENSHIFT_CATEGORY")
}


def rule(problem: Problem) -> str:
    return REPORTED_BY[problem.category]


def rules_of(obj: dict) -> list[tuple[str, tuple]]:
    return [(rule(p), p.path) for p in problems(obj)]


# Reference docs/openshift-operator.md#31-profile-conflicts, P2-P17.
PAIRS = [
    ("P2", "DevPreviewLongLifecycle", "LifecycleAndUtilization"),
    ("P3", "LongLifecycle", "LifecycleAndUtilization"),
    ("P4", "DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("P5", "LongLifecycle", "DevKubeVirtRelieveAndMigrate"),
    ("P6", "LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"),
    ("P7", "KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"),
    ("P8", "DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("P9", "LongLifecycle", "KubeVirtRelieveAndMigrate"),
    ("P10", "LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"),
    ("P11", "SoftTopologyAndDuplicates", "TopologyAndDuplicates"),
    ("P12", "CompactAndScale", "LifecycleAndUtilization"),
    ("P13", "CompactAndScale", "LongLifecycle"),
    ("P14", "CompactAndScale", "DevPreviewLongLifecycle"),
    ("P15", "CompactAndScale", "DevKubeVirtRelieveAndMigrate"),
    ("P16", "CompactAndScale", "KubeVirtRelieveAndMigrate"),
    ("P17", "CompactAndScale", "TopologyAndDuplicates"),
]


def test_the_table_matches_the_model():
    assert [(f.number, f.first, f.second) for f in FORBIDDEN] == PAIRS


@pytest.mark.parametrize(("number", "first", "second"), PAIRS, ids=[p[0] for p in PAIRS])
@pytest.mark.parametrize("order", ["as-listed", "reversed"])
def test_forbidden_pair(number, first, second, order):
    names = [first, second] if order == "as-listed" else [second, first]
    found = [p for p in problems(kd(spec(names))) if rule(p) == "DS501"]
    assert len(found) == 1
    assert f"cannot declare {first} and {second} profiles simultaneously" in found[0].message
    assert found[0].path == ("spec", "profiles", 1)


FORBIDDEN_SET = {frozenset((a, b)) for _, a, b in PAIRS}


@pytest.mark.parametrize(
    "pair", [p for p in itertools.combinations(PROFILES, 2) if frozenset(p) not in FORBIDDEN_SET], ids=str
)
def test_every_other_pair_is_allowed(pair):
    assert not [p for p in problems(kd(spec(list(pair)))) if rule(p) in ("DS501", "DS502")]


def test_duplicate_profiles():
    found = [p for p in problems(kd(spec(["AffinityAndTaints", "LongLifecycle", "AffinityAndTaints"])))]
    assert [(rule(p), p.path) for p in found] == [("DS501", ("spec", "profiles", 2))]
    assert "duplicate profiles are not allowed" in found[0].message


C = ("spec", "profileCustomizations")

# (case id, spec, expected (rule, path), message fragment) - docs/openshift-operator.md#1-the-spec,
# docs/openshift-operator.md#32-namespace-rules to docs/openshift-operator.md#34-cluster-rules.
REJECTIONS = [
    ("unknown-profile", spec(["Balanced"]), ("DS502", ("spec", "profiles", 0)), "unknown profile"),
    ("too-many-profiles", spec([*PROFILES, "AffinityAndTaints"]), ("DS502", ("spec", "profiles")), "at most 11"),
    ("empty-profiles", spec([]), ("DS502", ("spec", "profiles")), "at least 1 profile"),
    ("no-profiles", {"mode": "Automatic", "deschedulingIntervalSeconds": 1}, ("DS502", ("spec",)), "at least 1"),
    ("interval-zero", {**spec(["AffinityAndTaints"]), "deschedulingIntervalSeconds": 0},
     ("DS502", ("spec", "deschedulingIntervalSeconds")), "greater than 0"),
    ("interval-negative", {**spec(["AffinityAndTaints"]), "deschedulingIntervalSeconds": -5},
     ("DS502", ("spec", "deschedulingIntervalSeconds")), "greater than 0"),
    ("interval-unset", {"mode": "Automatic", "profiles": ["AffinityAndTaints"]}, ("DS502", ("spec",)), "interval"),
    ("mode-enum", {**spec(["AffinityAndTaints"]), "mode": "Auto"}, ("DS502", ("spec", "mode")), "mode 'Auto'"),
    ("loglevel-enum", spec(["AffinityAndTaints"], logLevel="Verbose"), ("DS502", ("spec", "logLevel")), "logLevel"),
    ("operator-loglevel-enum", spec(["AffinityAndTaints"], operatorLogLevel="x"),
     ("DS502", ("spec", "operatorLogLevel")), "operatorLogLevel"),
    ("management-state", spec(["AffinityAndTaints"], managementState="On"),
     ("DS502", ("spec", "managementState")), "managementState"),
    ("priority-both", spec(["AffinityAndTaints"], profileCustomizations={
        "thresholdPriority": 1000, "thresholdPriorityClassName": "high"}),
     ("DS502", (*C, "thresholdPriorityClassName")), "It is invalid to set both"),
    ("namespaces-both", spec(["AffinityAndTaints"], profileCustomizations={
        "namespaces": {"included": ["a"], "excluded": ["b"]}}),
     ("DS502", (*C, "namespaces", "excluded")), "forbidden to combine both included and excluded"),
    *[
        (f"protected-{ns}", spec(["AffinityAndTaints"], profileCustomizations={"namespaces": {"included": ["a", ns]}}),
         ("DS502", (*C, "namespaces", "included", 1)), f"Protected namespace {ns} included")
        for ns in ("kube-system", "hypershift", "openshift", "openshift-monitoring", "openshift-not-yet-created")
    ],
    ("low-thresholds-enum", spec(["LongLifecycle"], profileCustomizations={"devLowNodeUtilizationThresholds": "Huge"}),
     ("DS502", (*C, "devLowNodeUtilizationThresholds")), "devLowNodeUtilizationThresholds 'Huge'"),
    ("deviation-enum", spec(["KubeVirtRelieveAndMigrate"], profileCustomizations={"devDeviationThresholds": "X"}),
     ("DS502", (*C, "devDeviationThresholds")), "devDeviationThresholds 'X'"),
    ("high-thresholds-enum",
     spec(["CompactAndScale"], profileCustomizations={"devHighNodeUtilizationThresholds": "Big"}),
     ("DS502", (*C, "devHighNodeUtilizationThresholds")), "devHighNodeUtilizationThresholds 'Big'"),
    ("prometheus-profile", spec(["LongLifecycle"], profileCustomizations={"devActualUtilizationProfile": "CPU"}),
     ("DS502", (*C, "devActualUtilizationProfile")), "unknown prometheus profile: CPU"),
    *[
        (f"static-and-deviation-{p}", spec([p], profileCustomizations={
            "devLowNodeUtilizationThresholds": "Low", "devDeviationThresholds": "Low"}),
         ("DS502", (*C, "devDeviationThresholds")), "only one of DevLowNodeUtilizationThresholds")
        for p in KUBEVIRT
    ],
    ("empty-deviation-kubevirt", spec(["KubeVirtRelieveAndMigrate"], profileCustomizations={
        "devDeviationThresholds": ""}), ("DS502", (*C, "devDeviationThresholds")), "unknown Descheduler Deviation"),
    ("bad-duration", spec(["LifecycleAndUtilization"], profileCustomizations={"podLifetime": "1d"}),
     ("DS502", (*C, "podLifetime")), "not a Go duration"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "expected", "fragment"), REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_rejection(case, body, expected, fragment):
    found = problems(kd(body))
    matching = [p for p in found if (rule(p), p.path) == expected]
    assert matching, [(rule(p), p.path, p.message) for p in found]
    assert any(fragment in p.message for p in matching)


def test_singleton_name():
    found = problems(kd(spec(["AffinityAndTaints"]), name="mine"))
    assert [(rule(p), p.path) for p in found] == [("DS502", ("metadata", "name"))]


def test_static_and_deviation_without_kubevirt_is_not_rejected_but_ignored():
    body = spec(["LongLifecycle"], profileCustomizations={"devLowNodeUtilizationThresholds": "Low",
                                                          "devDeviationThresholds": "Low"})  # fmt: skip
    assert rules_of(kd(body)) == [("DS503", (*C, "devDeviationThresholds"))]


# (case id, spec, expected DS503 path, message fragment) - silently ignored and allowed-but-misleading.
FLAGGED = [
    ("podLifetime-without-lifecycle", spec(["LongLifecycle"], profileCustomizations={"podLifetime": "1h"}),
     (*C, "podLifetime"), "podLifetime is silently ignored"),
    ("high-without-compact", spec(["AffinityAndTaints"], profileCustomizations={
        "devHighNodeUtilizationThresholds": "Minimal"}), (*C, "devHighNodeUtilizationThresholds"), "ignored"),
    ("deviation-without-kubevirt", spec(["LifecycleAndUtilization"], profileCustomizations={
        "devDeviationThresholds": "Low"}), (*C, "devDeviationThresholds"), "ignored"),
    *[
        (f"{field}-without-kubevirt", spec(["AffinityAndTaints"], profileCustomizations={field: "15m"}),
         (*C, field), "ignored")
        for field in ("devMigrationCooldown", "devMaxMigrationCooldown", "devMigrationHistoryWindow")
    ],
    ("low-without-lnu", spec(["CompactAndScale"], profileCustomizations={"devLowNodeUtilizationThresholds": "Low"}),
     (*C, "devLowNodeUtilizationThresholds"), "ignored"),
    ("actual-without-lnu", spec(["AffinityAndTaints"], profileCustomizations={
        "devActualUtilizationProfile": "PrometheusCPUUsage"}), (*C, "devActualUtilizationProfile"), "ignored"),
    ("soft-tainter", spec(["KubeVirtRelieveAndMigrate"], profileCustomizations={"devEnableSoftTainter": True}),
     (*C, "devEnableSoftTainter"), "deprecated and ignored"),
    ("long-lifecycle-twice", spec(["LongLifecycle", "DevPreviewLongLifecycle"]), ("spec", "profiles", 1),
     "two identical profiles"),
    ("compact-soft-topology", spec(["CompactAndScale", "SoftTopologyAndDuplicates"]), ("spec", "profiles", 1),
     "work against each other"),
    *[
        (f"kubevirt-with-{name}", spec(["KubeVirtRelieveAndMigrate", name]), ("spec", "profiles", 1),
         "kubevirt.io/schedulable" if not name.startswith("Evict") else "no effect")
        for name in ("AffinityAndTaints", "TopologyAndDuplicates", "SoftTopologyAndDuplicates", "EvictPodsWithPVC",
                     "EvictPodsWithLocalStorage")
    ],
    ("deprecated-long-lifecycle", spec(["DevPreviewLongLifecycle"]), ("spec", "profiles", 0), "deprecated"),
    ("deprecated-kubevirt", spec(["DevKubeVirtRelieveAndMigrate"]), ("spec", "profiles", 0), "deprecated"),
    ("only-modifiers", spec(["EvictPodsWithPVC", "EvictPodsWithLocalStorage"]), ("spec", "profiles"),
     "only modifier profiles"),
    ("negative-limit", spec(["AffinityAndTaints"], evictionLimits={"total": -1}), ("spec", "evictionLimits", "total"),
     "unlimited"),
    ("zero-limit", spec(["AffinityAndTaints"], evictionLimits={"node": 0}), ("spec", "evictionLimits", "node"),
     "no evictions at all"),
    ("included-with-lnu", spec(["LongLifecycle"], profileCustomizations={"namespaces": {"included": ["a"]}}),
     (*C, "namespaces", "included"), "falls back"),
    ("included-with-compact", spec(["CompactAndScale"], profileCustomizations={"namespaces": {"included": ["a"]}}),
     (*C, "namespaces", "included"), "no evictableNamespaces"),
    ("sub-second-lifetime", spec(["LifecycleAndUtilization"], profileCustomizations={"podLifetime": "500ms"}),
     (*C, "podLifetime"), "becomes 0"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "path", "fragment"), FLAGGED, ids=[f[0] for f in FLAGGED])
def test_flagged(case, body, path, fragment):
    found = [p for p in problems(kd(body)) if rule(p) == "DS503" and p.path == path]
    assert found, [(rule(p), p.path, p.message) for p in problems(kd(body))]
    assert any(fragment in p.message for p in found)
    assert not [p for p in problems(kd(body)) if rule(p) in ("DS501", "DS502")]


def test_other_namespace_is_ignored_by_the_operator():
    found = problems(kd(spec(["AffinityAndTaints"]), namespace="default"))
    assert [(rule(p), p.path) for p in found] == [("DS503", ("metadata", "namespace"))]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"deschedulingIntervalSeconds": 1, "profiles": ["AffinityAndTaints"]}, ("spec",)),
        ({"mode": "Predictive", "deschedulingIntervalSeconds": 1, "profiles": ["AffinityAndTaints"]}, ("spec", "mode")),
    ],
)
def test_predictive_mode_is_info(body, path):
    assert rules_of(kd(body)) == [("DS504", path)]


def test_clean_automatic_cr_has_no_problem():
    assert problems(kd(spec(["AffinityAndTaints", "LifecycleAndUtilization", "EvictPodsWithPVC"]))) == []


@pytest.mark.parametrize(
    ("text", "nanoseconds", "formatted"),
    [("5m", 300 * 10**9, "5m0s"), ("15m", 900 * 10**9, "15m0s"), ("6h", 6 * 3600 * 10**9, "6h0m0s"),
     ("48h", 48 * 3600 * 10**9, "48h0m0s"), ("1h30m", 5400 * 10**9, "1h30m0s"), ("1.5s", 1_500_000_000, "1.5s"),
     ("300ms", 300_000_000, "300ms"), ("0", 0, "0s"), ("-2m", -120 * 10**9, "-2m0s")],
)  # fmt: skip
def test_go_durations(text, nanoseconds, formatted):
    assert parse_duration(text) == nanoseconds
    assert format_duration(nanoseconds) == formatted


@pytest.mark.parametrize("text", ["1d", "", "5", "m", "1h-5m"])
def test_invalid_go_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)
