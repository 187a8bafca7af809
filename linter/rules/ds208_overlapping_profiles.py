"""DS208: the same deschedule/balance plugin enabled in several profiles over overlapping namespaces."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, DocumentKind, Hit, Path
from desched.plugins.base import PodScope
from desched.policy.model import Profile
from desched.policy.namespaces import Scope, overlap, scope_of

ID = "DS208"
NAME = "overlapping-profiles"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Same plugin in several profiles over overlapping namespaces"
RATIONALE = (
    "Every profile runs each cycle. When two profiles enable the same plugin over namespaces that overlap, the "
    "same pods are judged twice per cycle with different settings, eviction limits are consumed twice, and the "
    "stricter profile's intent is silently overridden by the looser one."
)
REMEDIATION = "Give the profiles disjoint namespace scopes, or merge them into one profile."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 86400, namespaces: {include: [a]}}\n"
        "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n- name: b\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 3600, namespaces: {include: [b]}}\n"
        "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 86400}\n"
        "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n- name: b\n  pluginConfig:\n"
        "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 3600, namespaces: {exclude: [kube-system]}}\n"
        "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    evicting = [(profile, ref) for profile in ctx.model.profiles for ref, _ in profile.evicting()]
    profiles_of: dict[str, set[Path]] = {}
    for profile, ref in evicting:
        profiles_of.setdefault(ref.name, set()).add(profile.path)
    shared_names = {name for name, paths in profiles_of.items() if len(paths) > 1}
    scopes: dict[Path, dict[str, PodScope]] = {}  # read only for profiles that share a plugin with another
    seen: dict[str, list[tuple[Profile, Scope]]] = {}
    for profile, ref in evicting:
        if ref.name not in shared_names:
            continue
        if profile.path not in scopes:
            scopes[profile.path] = dict(profile.pod_scopes(ctx.target))
        scope = scope_of(scopes[profile.path][ref.name].namespaces)
        earlier = seen.setdefault(ref.name, [])
        for other, other_scope in earlier:
            if other.path == profile.path:
                continue
            shared = overlap(scope, other_scope)
            if shared is None:
                where = "in every namespace that neither excludes"
            elif shared:
                where = "in namespaces " + ", ".join(sorted(shared))
            else:
                continue
            yield Hit(
                f'{ref.name} is enabled in profiles "{other.name}" and "{profile.name}" {where}: the same pods are '
                "judged twice per cycle",
                ref.path,
            )
            break
        earlier.append((profile, scope))
