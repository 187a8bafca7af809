"""DS209: a negative gracePeriodSeconds or numberOfNodes, which upstream accepts without a check."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS209"
NAME = "negative-value"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Negative gracePeriodSeconds or numberOfNodes"
RATIONALE = (
    "Upstream copies `gracePeriodSeconds` into every Eviction's DeleteOptions without a check; the API server "
    "rejects a negative grace period, so every eviction fails. A negative `numberOfNodes` is accepted and behaves "
    "like 0, which is not what was written."
)
REMEDIATION = "Use 0 or a positive number."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\ngracePeriodSeconds: 0\nprofiles: []\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\ngracePeriodSeconds: -1\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: HighNodeUtilization\n    args: {thresholds: {cpu: 20}, numberOfNodes: -2}\n",
    ],
}


def _negative(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def check(ctx: Context) -> Iterator[Hit]:
    grace = ctx.policy.get("gracePeriodSeconds")
    if _negative(grace):
        yield Hit(
            f"gracePeriodSeconds is {grace}: the API server rejects a negative grace period, so every eviction fails",
            ("gracePeriodSeconds",),
        )
    for profile in ctx.model.profiles:
        for config in profile.configs:
            if _negative(config.raw_args.get("numberOfNodes")):
                yield Hit(
                    f"{config.name} numberOfNodes is {config.raw_args['numberOfNodes']}: negative values behave like 0",
                    (*config.args_path, "numberOfNodes"),
                )
