"""Keys that belong to the other policy version: reported as mixed shapes (DS102), not as unknown keys (DS003)."""

from __future__ import annotations

from desched.linter.rules._base import Context, Path
from desched.policy.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2

__all__ = ["EVICTOR_FLAGS", "foreign_key", "lost_key"]

EVICTOR_FLAGS = ("evictLocalStoragePods", "evictDaemonSetPods", "evictSystemCriticalPods", "ignorePvcPods",
                 "evictFailedBarePods")  # fmt: skip

_ONLY_V1ALPHA1 = frozenset(POLICY_V1ALPHA1.fields) - frozenset(POLICY_V1ALPHA2.fields)
_ONLY_V1ALPHA2 = frozenset(POLICY_V1ALPHA2.fields) - frozenset(POLICY_V1ALPHA1.fields) - {"maxNoOfPodsToEvictTotal"}


def foreign_key(ctx: Context, path: Path) -> bool:
    """True for a top-level key of the other API version (``strategies`` in v1alpha2, ``profiles`` in v1alpha1)."""
    if len(path) != 1 or not isinstance(path[0], str):
        return False
    return path[0] in (_ONLY_V1ALPHA2 if ctx.is_v1alpha1 else _ONLY_V1ALPHA1)


def lost_key(ctx: Context, path: Path) -> bool:
    """True for v1alpha1 content upstream's converter drops that DS104 reports (top-level maxNoOfPodsToEvictTotal)."""
    return ctx.is_v1alpha1 and path == ("maxNoOfPodsToEvictTotal",)
