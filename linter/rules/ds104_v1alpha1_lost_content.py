"""DS104: v1alpha1 content that upstream's converter loses or ignores, and unknown strategy names."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.plugins import REGISTRY
from desched.policy.structure import closest

ID = "DS104"
NAME = "v1alpha1-lost-content"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "v1alpha1 content the conversion loses, or an unknown strategy"
RATIONALE = (
    "Upstream converted v1alpha1 to v1alpha2 in memory and silently lost some of it: `includedTaints` was never "
    "copied, `weight` was never used, `labelSelector` is dropped for RemoveDuplicates and the node-utilization "
    "strategies (and `targetThresholds`/`useDeviationThresholds` for HighNodeUtilization), and v1alpha1 has no "
    "`maxNoOfPodsToEvictTotal`. An unknown strategy name fails the whole conversion, even when it is disabled."
)
REMEDIATION = (
    "Run `desched migrate`, which carries includedTaints and maxNoOfPodsToEvictTotal over and says what it drops."
)
EXAMPLES = {
    "pass": [
        (
            "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates:\n"
            "    enabled: true\n",
            "v0.30",
        )
    ],
    "fail": [
        (
            "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n"
            "  RemovePodsViolatingNodeTaints:\n    enabled: true\n    params:\n      includedTaints: [dedicated]\n",
            "v0.30",
        ),
        (
            "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicate:\n"
            "    enabled: false\n",
            "v0.30",
        ),
    ],
}

_STRATEGIES = sorted(name for name in REGISTRY if name != "DefaultEvictor")


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha1:
        return
    if "maxNoOfPodsToEvictTotal" in ctx.policy:
        yield Hit(
            "maxNoOfPodsToEvictTotal does not exist in v1alpha1: upstream ignores it (desched migrate carries it over)",
            ("maxNoOfPodsToEvictTotal",),
            key=True,
        )
    strategies = ctx.policy.get("strategies")
    if not isinstance(strategies, dict):
        return
    for name, strategy in strategies.items():
        base = ("strategies", name)
        if name not in REGISTRY:
            suggestion = closest(name, _STRATEGIES)
            hint = f'; did you mean "{suggestion}"?' if suggestion else ""
            yield Hit(f"unknown strategy name: {name}: upstream fails to convert the policy{hint}", base, key=True)
            continue
        if not isinstance(strategy, dict):
            continue
        if "weight" in strategy:
            yield Hit("weight is parsed and never used by the descheduler", (*base, "weight"), key=True)
        params = strategy.get("params")
        if not isinstance(params, dict):
            continue
        if params.get("includedTaints") is not None:
            yield Hit(
                "includedTaints is silently dropped by upstream's conversion (desched migrate carries it over)",
                (*base, "params", "includedTaints"),
                key=True,
            )
        if "labelSelector" not in REGISTRY[name].args.fields and params.get("labelSelector") is not None:
            yield Hit(
                f"labelSelector is dropped for {name}: its plugin has no labelSelector",
                (*base, "params", "labelSelector"),
                key=True,
            )
        thresholds = params.get("nodeResourceUtilizationThresholds")
        if name == "HighNodeUtilization" and isinstance(thresholds, dict):
            for key in ("targetThresholds", "useDeviationThresholds"):
                if key in thresholds:
                    yield Hit(
                        f"{key} is dropped for HighNodeUtilization: its plugin has no {key}",
                        (*base, "params", "nodeResourceUtilizationThresholds", key),
                        key=True,
                    )
