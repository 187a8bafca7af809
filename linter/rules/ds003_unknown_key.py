"""DS003: a key that no descheduler release knows, or a miscased one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.linter.rules._base import Context, DocumentKind, Hit, Path
from desched.linter.rules._shapes import foreign_key, lost_key

DEFAULT_EVICTOR = "DefaultEvictor"

ID = "DS003"
NAME = "unknown-key"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Unknown or miscased key"
RATIONALE = (
    "Outside plugin args, upstream's decoder silently drops keys it does not know, and matching is "
    "case-sensitive: `preEvictionFilter`, `pluginConfigs` or `evict:` are ignored without a word and the policy "
    "means something else than it says. Inside args, decoding is strict and the descheduler fails at start-up. "
    "A dropped key whose content changes nothing is a warning: `preEvictionFilter` that only enables "
    "DefaultEvictor, which upstream enables there anyway."
)
REMEDIATION = "Rename the key to the suggested spelling, or remove it."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfigs: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n"
        "    preEvictionFilter:\n      enabled: [RemoveDuplicates]\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n    args:\n      labelSelector: {}\n  plugins:\n    balance:\n"
        "      enabled: [RemoveDuplicates]\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for problem in ctx.structure:
        if problem.code == "unknown-key" and not foreign_key(ctx, problem.path) and not lost_key(ctx, problem.path):
            if _changes_nothing(ctx, problem.path):
                message = (
                    f"{problem.message}; it only enables DefaultEvictor, which upstream enables as a pre-eviction "
                    "filter anyway, so the policy runs the same"
                )
                yield Hit(message, problem.path, key=True, severity="warning")
            else:
                yield Hit(problem.message, problem.path, key=True)


def _changes_nothing(ctx: Context, path: Path) -> bool:
    """True for a miscased ``preEvictionFilter`` whose only content is enabling DefaultEvictor: upstream drops the
    key, and enables DefaultEvictor at that point itself (docs/policy-api.md), so dropping it changes nothing."""
    if path[-2:] != ("plugins", "preEvictionFilter"):
        return False
    value: Any = ctx.policy
    for part in path:
        value = value[part]
    if not isinstance(value, dict) or set(value) - {"enabled", "disabled"} or value.get("disabled"):
        return False
    enabled = value.get("enabled") or []
    return isinstance(enabled, list) and all(name == DEFAULT_EVICTOR for name in enabled)
