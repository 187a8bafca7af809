"""DS207: a policy or profile that can never evict anything."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.plugins.nodeutilization import LowNodeUtilizationArgs
from desched.policy.model import EVICTING_POINTS

ID = "DS207"
NAME = "never-evicts"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Policy or profile that can never evict anything"
RATIONALE = (
    "A policy without profiles, a profile without any deschedule or balance plugin, or an eviction limit of 0 "
    "(global or a plugin's `evictionLimits.node`) is accepted by upstream and then does nothing at all, every "
    "cycle, without a word."
)
REMEDIATION = "Enable at least one deschedule or balance plugin, and use limits above 0 (or remove them)."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictPerNode: 2\nprofiles:\n"
        "- name: p\n  pluginConfig:\n  - name: RemoveDuplicates\n  plugins:\n    balance:\n"
        "      enabled: [RemoveDuplicates]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictTotal: 0\nprofiles:\n"
        "- name: p\n  pluginConfig:\n  - name: RemoveDuplicates\n  plugins:\n    balance:\n"
        "      enabled: [RemoveDuplicates]\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {nodeFit: true}\n",
    ],
}

_LIMITS = ("maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal")


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2:
        return
    profiles = ctx.policy.get("profiles")
    if not profiles:
        if _misspelt_profiles(ctx):
            return  # one mistake, one finding: DS003 names the key that was meant to be "profiles"
        where = ("profiles",) if "profiles" in ctx.policy else ()
        yield Hit("the policy has no profiles: the descheduler runs and never evicts anything", where)
        return
    for limit in _LIMITS:
        if ctx.policy.get(limit) == 0 and not isinstance(ctx.policy.get(limit), bool):
            yield Hit(f"{limit} is 0: no pod can ever be evicted", (limit,))
    for profile in ctx.model.profiles:
        if not profile.enabled(*EVICTING_POINTS):
            written = profiles[profile.path[-1]]
            yield Hit(
                f'profile "{profile.name}" enables no deschedule or balance plugin: it never evicts',
                (*profile.path, "plugins") if "plugins" in written else profile.path,
            )
        for ref, config in profile.evicting():
            args = config.args if config is not None else None
            if isinstance(args, LowNodeUtilizationArgs) and args.eviction_limit_per_node == 0:
                assert config is not None
                yield Hit(
                    f"{ref.name} evictionLimits.node is 0: this plugin never evicts",
                    (*config.args_path, "evictionLimits", "node"),
                )


def _misspelt_profiles(ctx: Context) -> bool:
    """Whether the policy has a top-level key that is an unknown spelling of ``profiles`` (``profile:``)."""
    return any(
        problem.code == "unknown-key" and len(problem.path) == 1 and problem.suggestion == "profiles"
        for problem in ctx.structure
    )
