"""DS201: a profile without a name, or two profiles with the same name."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS201"
NAME = "profile-name"
SEVERITY = "error"
SCOPE = "profile"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Duplicate or empty profile name"
RATIONALE = (
    "Upstream never checks profile names, yet it uses them in logs, in the `profile` label of its metrics and in "
    "the eviction reason annotation. Two profiles with one name, or a nameless one, make evictions impossible to "
    "attribute and dashboards wrong."
)
REMEDIATION = "Give every profile a unique, non-empty name."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n- name: b\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n- name: a\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- plugins: {}\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    seen: dict[str, int] = {}
    for index, profile in ctx.profiles():
        name = profile.get("name")
        if not isinstance(name, str) or not name.strip():
            where = ("profiles", index, "name") if "name" in profile else ("profiles", index)
            yield Hit(f"profile {index} has an empty name", where)
            continue
        if name in seen:
            yield Hit(
                f'profile name "{name}" is used by profile {seen[name]} too; names must be unique',
                ("profiles", index, "name"),
            )
        else:
            seen[name] = index
