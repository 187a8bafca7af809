"""DS211: a profile descheduler v0.30 skips, its DefaultEvictor adding the owner index a previous profile added."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.versions import render

ID = "DS211"
NAME = "profile-skipped-index-conflict"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
RELEASE_DEPENDENT = True
SUMMARY = "v0.30 skips every profile after the first whose DefaultEvictor sets minReplicas > 1"
RATIONALE = (
    "In descheduler v0.30 a DefaultEvictor with `minReplicas` above 1 adds an owner-reference index to the pod "
    "informer every profile shares. The second profile that adds it fails with `indexer conflict`, and upstream "
    "logs the error and skips the whole profile, in every cycle; a long-running descheduler also skips the first "
    "one from its second cycle on. v0.31 reuses the index (pkg/framework/plugins/defaultevictor/defaultevictor.go)."
)
REMEDIATION = "Run v0.31 or later, or keep minReplicas above 1 in one profile only."
RELEASE = 30  # docs/executor-semantics.md#13-decisions-per-release: the row evictor-index-conflict
EXAMPLES = {
    "pass": [
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {minReplicas: 2}\n- name: b\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {minReplicas: 1}\n",
            "v0.30",
        ),
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {minReplicas: 2}\n- name: b\n  pluginConfig:\n"
        "  - name: DefaultEvictor\n    args: {minReplicas: 3}\n",
    ],
    "fail": [
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {minReplicas: 2}\n- name: b\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {minReplicas: 3}\n",
            "v0.30",
        )
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2 or ctx.target != RELEASE:
        return
    from desched.workloads.eviction import owner_index_conflicts  # the eviction model stays off the lint path

    profiles = ctx.model.profiles
    for position in owner_index_conflicts(profile.evictor_args() for profile in profiles):
        profile = profiles[position]
        yield Hit(
            f'descheduler {render(RELEASE)} skips profile "{profile.name}" in every cycle: its DefaultEvictor sets '
            "minReplicas above 1 after an earlier profile did (indexer conflict)",
            profile.path,
        )
