"""DS006: a field or value that exists in some descheduler release but not in the target one."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS006"
NAME = "release-gated"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
VALIDATION_CODES = frozenset({"version"})  # the upstream validation errors this rule reports
SUMMARY = "Field or value not available in the target descheduler release"
RATIONALE = (
    "Fields arrive and leave with releases (docs/policy-api.md#413-when-args-appeared): `evictionLimits` needs "
    "v0.33, `podProtections` v0.34, `includeSoftConstraints` left in v0.28. Inside plugin args an unknown field "
    "fails strict decoding, so a policy written for a newer release crash-loops an older descheduler (upstream "
    "issues #1658, #1801, #1411); "
    "outside args it is silently ignored."
)
REMEDIATION = "Set --target-version to the release you deploy, and use only what that release supports."
EXAMPLES = {
    "pass": [
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args: {evictLocalStoragePods: true}\n",
            "v0.33",
        )
    ],
    "fail": [
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
            "  - name: DefaultEvictor\n    args:\n      podProtections:\n        extraEnabled: [PodsWithPVC]\n",
            "v0.33",
        ),
        (
            "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\ngracePeriodSeconds: 30\nprofiles: []\n",
            "v0.32",
        ),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for problem in ctx.structure:
        if problem.code == "version":
            yield Hit(problem.message, problem.path, key=True)
    for error in ctx.arg_errors:
        if error.code == "version":
            yield Hit(error.message, error.path)
