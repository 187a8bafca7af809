"""DS203: an enabled plugin without a pluginConfig entry."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.policy.model import ACTIVE_POINTS

ID = "DS203"
NAME = "missing-plugin-config"
SEVERITY = "error"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Enabled plugin without a pluginConfig entry"
RATIONALE = (
    "Every enabled plugin needs a `pluginConfig` entry, even one without args; upstream only finds out when it "
    'builds the profile at start-up and then exits (`unable to find "<n>" plugin config`). DefaultEvictor is the '
    "exception: its entry is added automatically."
)
REMEDIATION = "Add `- name: <Plugin>` (with the args it needs) to the profile's pluginConfig."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
        "    balance:\n      enabled: [RemoveDuplicates]\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for profile in ctx.model.profiles:
        reported: set[str] = set()
        for ref in profile.enabled(*ACTIVE_POINTS):
            if ref.name == "DefaultEvictor" or not ref.registered or profile.config(ref.name) is not None:
                continue
            if ref.name in reported:
                continue
            reported.add(ref.name)
            yield Hit(
                f'unable to create "{profile.name}" profile: unable to build {ref.name} plugin: '
                f'unable to find "{ref.name}" plugin config; add a pluginConfig entry named {ref.name}',
                ref.path,
            )
