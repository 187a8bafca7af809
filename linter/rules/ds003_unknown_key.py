"""DS003: a key that no descheduler release knows, or a miscased one."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._shapes import foreign_key, lost_key

ID = "DS003"
NAME = "unknown-key"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Unknown or miscased key"
RATIONALE = (
    "Outside plugin args, upstream's decoder silently drops keys it does not know, and matching is "
    "case-sensitive: `preEvictionFilter`, `pluginConfigs` or `evict:` are ignored without a word and the policy "
    "means something else than it says. Inside args, decoding is strict and the descheduler fails at start-up."
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
        "    preEvictionFilter:\n      enabled: [DefaultEvictor]\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n    args:\n      labelSelector: {}\n  plugins:\n    balance:\n"
        "      enabled: [RemoveDuplicates]\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for problem in ctx.structure:
        if problem.code == "unknown-key" and not foreign_key(ctx, problem.path) and not lost_key(ctx, problem.path):
            yield Hit(problem.message, problem.path, key=True)
