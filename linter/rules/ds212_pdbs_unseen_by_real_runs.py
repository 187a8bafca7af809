"""DS212: the PodsWithoutPDB protection in a policy run by v0.35 or v0.36, whose real runs list no PDB."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.versions import render

ID = "DS212"
NAME = "pdbs-unseen-by-real-runs"
SEVERITY = "warning"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
RELEASE_DEPENDENT = True
SUMMARY = "PodsWithoutPDB protection on v0.35 or v0.36: a real run evicts no pod of that profile"
RATIONALE = (
    "descheduler v0.35 and v0.36 register the PodDisruptionBudget informer only when the PodsWithoutPDB protection "
    "first reads it, after the informers were started: a real run never lists a PDB, so every pod counts as "
    "uncovered and the protection refuses it (upstream issue #1882, fixed after v0.36.0 by registering the informer "
    "at start-up). A `--dry-run` descheduler lists the budgets and shows evictions the real run never makes. With "
    "the protection on (`ignorePodsWithoutPDB: true`, or `PodsWithoutPDB` in `podProtections.extraEnabled`), the "
    "profile evicts nothing."
)
REMEDIATION = (
    "Run v0.34, or a release with the fix (after v0.36.0); or drop the protection and keep PodDisruptionBudgets on "
    "the workloads the policy may evict (DS401 finds those without one)."
)
RELEASES = range(35, 37)  # docs/executor-semantics.md#13-decisions-per-release: the row pdb-informer-registered
_POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
    "  - name: DefaultEvictor\n    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)
EXAMPLES = {
    "pass": [
        (_POLICY, "v0.34"),
        _POLICY.replace("extraEnabled: [PodsWithoutPDB]", "defaultDisabled: [FailedBarePods]"),
    ],
    "fail": [_POLICY, (_POLICY, "v0.35")],
}


def check(ctx: Context) -> Iterator[Hit]:
    if not ctx.is_v1alpha2 or ctx.target not in RELEASES or ctx.release.program == "desched":
        return  # desched run lists the budgets itself, at every release
    for profile in ctx.model.profiles:
        args = profile.evictor_args()
        named = "ignorePodsWithoutPDB" in args.legacy_flags or "PodsWithoutPDB" in args.pod_protections.extra_enabled
        if not named:
            continue  # the protection is off: the eviction model is not loaded
        from desched.workloads.eviction import active_protections  # the eviction model stays off the lint path

        if "PodsWithoutPDB" not in active_protections(args, ctx.target):
            continue
        config = profile.config("DefaultEvictor")
        yield Hit(
            f'descheduler {render(ctx.target)} evicts no pod of profile "{profile.name}" in a real run: its '
            "PodsWithoutPDB protection sees no PodDisruptionBudget (upstream #1882); a dry run does",
            config.args_path if config is not None else profile.path,
        )
