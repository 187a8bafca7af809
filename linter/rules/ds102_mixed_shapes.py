"""DS102: v1alpha1 keys in a v1alpha2 policy, or v1alpha2 keys in a v1alpha1 policy."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.documents import HELM_VERSION_KEY, is_misdeclared_v1alpha1
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._shapes import chart_default_runs, chart_of, foreign_key

ID = "DS102"
NAME = "mixed-shapes"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Mixed v1alpha1 and v1alpha2 shapes"
RATIONALE = (
    "Blog posts and charts still mix the two policy shapes: `strategies` under `descheduler/v1alpha2`, "
    "`profiles` under `descheduler/v1alpha1`, or v1alpha1's top-level evictor flags (`evictLocalStoragePods`, "
    "...) in a v1alpha2 policy. Upstream's decoder drops the foreign keys without a word, so the policy runs "
    "without the strategies or settings it appears to have. The severity follows the consequence: a top-level flag "
    "that every profile's DefaultEvictor already sets to the same value changes nothing and is a warning."
)
REMEDIATION = (
    "Write the policy in one shape. `strategies` without `profiles` under v1alpha2: `desched migrate --in-place "
    "FILE` reads them as the v1alpha1 they are and writes them as profiles. `strategies` beside `profiles`: move "
    "each strategy into a profile by hand (or into a v1alpha1 file of its own that `desched migrate` converts), "
    "then delete `strategies`. Evictor flags: move them into the DefaultEvictor args of each profile."
)
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nstrategies:\n  RemoveDuplicates:\n"
        "    enabled: true\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nevictLocalStoragePods: true\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nprofiles: []\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nevictLocalStoragePods: true\nprofiles:\n- name: p\n"
        "  pluginConfig:\n  - name: DefaultEvictor\n    args: {evictLocalStoragePods: true}\n",
    ],
}


_NONE_RUNS = "a v1alpha2 policy ignores it silently, so none of these strategies runs"


def check(ctx: Context) -> Iterator[Hit]:
    for key in ctx.policy:
        if not foreign_key(ctx, (key,)) or ctx.doc.chart_default((key,)) is not None:
            continue  # a chart default of the shape the values do not use: ignored, as the values mean it to be
        instead = chart_default_runs(ctx, key)
        if ctx.is_v1alpha1:
            reason = instead or "upstream silently ignores it"
            fix = _profiles_fix(ctx) if instead is not None and key == "profiles" else ""
            yield Hit(f'"{key}" is a descheduler/v1alpha2 field in a v1alpha1 policy: {reason}{fix}', (key,), key=True)
        elif key == "strategies":
            if is_misdeclared_v1alpha1(ctx.declared) or instead is not None:
                fix = (
                    f"run `desched migrate --in-place {ctx.doc.file}`: it reads them as v1alpha1 and writes them as "
                    "profiles"
                )
            else:
                fix = (
                    "move each strategy into a profile's plugins and pluginConfig by hand (or into a v1alpha1 file "
                    "of its own, which `desched migrate` converts), then delete strategies"
                )
            yield Hit(
                f'"strategies" is the v1alpha1 shape: {instead or _NONE_RUNS}; {fix}',
                (key,),
                key=True,
            )
        elif _every_evictor_sets(ctx, key):
            yield Hit(
                f'"{key}" is a v1alpha1 top-level flag: v1alpha2 ignores it silently, and every profile\'s '
                "DefaultEvictor already sets it to the same value, so nothing changes; delete it",
                (key,),
                key=True,
                severity="warning",
            )
        else:
            yield Hit(
                f'"{key}" is a v1alpha1 top-level flag: v1alpha2 ignores it silently; set it in the DefaultEvictor '
                "args of each profile",
                (key,),
                key=True,
            )


def _profiles_fix(ctx: Context) -> str:
    """How chart values whose profiles the chart renders as v1alpha1 get them run."""
    from desched.chart.record import api_version_upgrade  # only chart values of mixed shapes pay for the records

    step = f"set {HELM_VERSION_KEY}: descheduler/v1alpha2 in the values"
    upgrade = api_version_upgrade(chart_of(ctx))
    if upgrade is not None:
        minor = upgrade.rsplit(".", 1)[0]
        step = f"upgrade the chart to {minor} or later and {step}, or write the policy as strategies until then"
    return "; " + step


def _every_evictor_sets(ctx: Context, key: str) -> bool:
    """Whether every profile (there is one at least) has a DefaultEvictor entry whose args set ``key`` to the value
    the top-level flag has: the flag, ignored, then changes nothing the policy does (a warning, not an error)."""
    profiles = ctx.model.profiles
    configs = [profile.config("DefaultEvictor") for profile in profiles]
    value = ctx.policy[key]
    return bool(profiles) and all(c is not None and key in c.raw_args and c.raw_args[key] == value for c in configs)
