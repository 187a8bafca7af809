"""DS103: deprecated DefaultEvictor booleans where podProtections is the current form."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.validation.vocab import LEGACY_FLAG_PROTECTIONS

ID = "DS103"
NAME = "deprecated-evictor-flags"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
SUMMARY = "Deprecated DefaultEvictor booleans (use podProtections)"
RATIONALE = (
    "From descheduler v0.34 DefaultEvictor's protections are configured with `podProtections` "
    "(`defaultDisabled`, `extraEnabled`); the six booleans (`evictLocalStoragePods`, `ignorePvcPods`, ...) are "
    "deprecated. Mixing both forms is rejected at load time, so new settings cannot be added next to old ones. "
    "Every release still reads the booleans, so when nothing says which release runs the policy the finding is "
    "an info: the booleans are what v0.31 to v0.33 need."
)
REMEDIATION = "Replace each boolean with its podProtections entry, as the message says."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args:\n      podProtections: {defaultDisabled: [PodsWithLocalStorage]}\n",
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {evictLocalStoragePods: true}\n",
            "v0.33",
        ),
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {evictLocalStoragePods: true}\n"
    ],
}

REPLACEMENTS = LEGACY_FLAG_PROTECTIONS
_SINCE = 34


def check(ctx: Context) -> Iterator[Hit]:
    if ctx.target < _SINCE or not ctx.is_v1alpha2:
        return
    for profile in ctx.model.profiles:
        for config in profile.configs:
            args = config.raw_args
            if config.name != "DefaultEvictor":
                continue
            for flag, (where, protection) in REPLACEMENTS.items():
                if flag not in args:
                    continue
                if args[flag] is True:
                    advice = f"use podProtections.{where}: [{protection}]"
                else:
                    advice = "remove it (false is the default)"
                if ctx.release.guessed:  # every release up to the newest still reads it: a note, not a warning
                    advice += "; keep it while a descheduler before v0.34 may read this policy"
                yield Hit(
                    f"{flag} is deprecated since descheduler v0.34; {advice}",
                    (*config.args_path, flag),
                    key=True,
                    severity="info" if ctx.release.guessed else None,
                )
