"""DS004: a value of the wrong type for its field."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS004"
NAME = "wrong-type"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Wrong type for a field"
RATIONALE = (
    "Upstream decodes the policy into Go types; a string where a number is expected, a negative value for an "
    "unsigned field, a number too large for int32 or a malformed duration fails decoding and the descheduler "
    "does not start. YAML makes some of these easy to write by accident (`yes` is a boolean, `08` a string)."
)
REMEDIATION = "Write the value with the type the field expects (see the message and docs/rules.md)."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictPerNode: 5\nprofiles: []\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictPerNode: -1\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n  name: p\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args:\n      maxPodLifeTimeSeconds: '86400'\n  plugins:\n    deschedule:\n"
        "      enabled: [PodLifeTime]\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    for problem in ctx.structure:
        if problem.code == "wrong-type":
            yield Hit(problem.message, problem.path)
