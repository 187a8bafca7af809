"""Shared by DS501-DS504: the problems of a KubeDescheduler, computed once per document."""

from __future__ import annotations

from collections.abc import Iterator

from desched.linter.rules._base import Context, Hit

__all__ = ["example", "hits"]

_KD = "apiVersion: operator.openshift.io/v1\nkind: KubeDescheduler\nmetadata:\n  name: cluster\n"
_KD += "  namespace: openshift-kube-descheduler-operator\nspec:\n"


def example(spec: str) -> str:
    """A KubeDescheduler example with ``spec`` (indented two spaces) under the usual envelope."""
    return _KD + spec


def hits(ctx: Context, category: str) -> Iterator[Hit]:
    """The problems of ``category`` on a KubeDescheduler document, as hits (nothing on any other document)."""
    if not ctx.is_kubedescheduler:
        return
    for problem in ctx.openshift_problems:
        if problem.category == category:
            yield Hit(problem.message, problem.path, key=problem.key)
