"""DS002: a document that is otherwise a policy has a missing or wrong apiVersion or kind."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.documents import Shape
from desched.linter.rules._base import V1ALPHA1, V1ALPHA2, Context, DocumentKind, Hit

ID = "DS002"
NAME = "api-version-kind"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Missing or wrong apiVersion/kind on a policy"
RATIONALE = (
    "Without apiVersion, upstream decodes the file into its internal type, where no key matches: the result is "
    "an empty policy, no error, and a descheduler that never evicts anything. A wrong apiVersion or kind fails "
    "decoding at start-up. A missing kind is inferred upstream, but tools that route on kind (admission webhooks, "
    "editors' schemas) miss the document."
)
REMEDIATION = "Start the policy with `apiVersion: descheduler/v1alpha2` and `kind: DeschedulerPolicy`."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"],
    "fail": [
        "kind: DeschedulerPolicy\nprofiles: []\n",
        "apiVersion: descheduler/v1beta1\nkind: DeschedulerPolicy\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles: []\n",
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    api_version, kind = ctx.doc.api_version, ctx.doc.kind
    field = "deschedulerPolicyAPIVersion" if ctx.doc.shape == Shape.HELM else "apiVersion"
    if api_version is None:
        yield Hit(
            "missing apiVersion: upstream decodes this as an empty policy without any error and evicts nothing; "
            f"add `apiVersion: {V1ALPHA2}`",
            ("apiVersion",),
            key=True,
        )
    elif api_version not in (V1ALPHA1, V1ALPHA2):
        yield Hit(
            f'{field} "{api_version}" is not a descheduler policy version: upstream fails to decode it '
            f'(no kind "DeschedulerPolicy" is registered for version "{api_version}"); use {V1ALPHA2}',
            ("apiVersion",),
        )
    if kind is None:
        if api_version is not None:
            yield Hit(
                "missing kind: upstream infers DeschedulerPolicy, but tools that route on kind do not; "
                "add `kind: DeschedulerPolicy`",
                ("apiVersion",),
                key=True,
                severity="warning",
            )
    elif kind != "DeschedulerPolicy":
        yield Hit(f'kind "{kind}" is not DeschedulerPolicy: upstream fails to decode the policy', ("kind",))
