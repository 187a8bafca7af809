"""DS311: PodLifeTime shorter than 10 minutes without a filter that limits it to unhealthy pods."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS311"
NAME = "short-pod-lifetime"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "PodLifeTime under 10 minutes without a states filter"
RATIONALE = (
    "PodLifeTime evicts every pod older than `maxPodLifeTimeSeconds`. Without `states` (or `conditions`, "
    "`exitCodes`) that includes healthy pods, and a lifetime of a few minutes restarts the whole cluster in a "
    "loop: each replacement is evicted again as soon as it is old enough."
)
REMEDIATION = "Raise maxPodLifeTimeSeconds (option min-seconds, default 600) or add a states filter."
OPTIONS = {"min-seconds": 600}
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 300, states: [CrashLoopBackOff]}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 300}\n"
    ],
}

_FILTERS = ("states", "conditions", "exitCodes")


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2:
        return
    minimum = ctx.options(ID, OPTIONS)["min-seconds"]
    for profile in ctx.model.profiles:
        for config in profile.configs:
            args = config.raw_args
            if config.name != "PodLifeTime":
                continue
            seconds = args.get("maxPodLifeTimeSeconds")
            if not isinstance(seconds, int) or isinstance(seconds, bool) or not 0 <= seconds < minimum:
                continue  # absent, ill-typed or negative (DS004), or long enough
            if any(args.get(key) for key in _FILTERS):
                continue
            yield Hit(
                f"PodLifeTime evicts every pod older than {seconds}s with no states filter: healthy pods are "
                "restarted in a loop",
                (*config.args_path, "maxPodLifeTimeSeconds"),
            )
