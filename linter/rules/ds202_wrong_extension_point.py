"""DS202: a registered plugin enabled at an extension point it does not implement."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.policy.model import ACTIVE_POINTS

ID = "DS202"
NAME = "wrong-extension-point"
SEVERITY = "error"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Plugin enabled at an extension point it does not implement"
RATIONALE = (
    "Each plugin implements one kind of extension point: LowNodeUtilization balances, PodLifeTime deschedules, "
    "DefaultEvictor filters. Upstream finds a plugin in the wrong list only when it builds the profile at "
    "start-up, and then refuses to start (`configures <point> extension point of non-existing plugins`)."
)
REMEDIATION = "Move the plugin to the extension point named in the message."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
        "  plugins:\n    deschedule:\n      enabled: [LowNodeUtilization]\n"
    ],
}

_SPELLING = {"preevictionfilter": "preEvictionFilter"}


def check(ctx: Context) -> Iterator[Hit]:
    for profile in ctx.model.profiles:
        for ref in profile.enabled(*ACTIVE_POINTS):
            if ref.plugin is None or ref.implements_point:
                continue
            belongs = " and ".join(ref.plugin.extension_points)
            yield Hit(
                f'profile "{profile.name}" configures {_SPELLING.get(ref.point, ref.point)} extension '
                f"point of non-existing plugins: [{ref.name}]; {ref.name} is a {belongs} plugin",
                ref.path,
            )
