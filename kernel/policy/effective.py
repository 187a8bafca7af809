"""The v1alpha2 policy a document stands for: itself, its v1alpha1 conversion, or what the OpenShift operator renders.

Analyses that reason about what a policy evicts (the DS40x rules, ``desched scope``) start from here, so that every
policy shape is judged by the policy the descheduler would actually run.
"""

from __future__ import annotations

from typing import Any

from desched import versions
from desched.documents import PolicyDoc

__all__ = ["effective_policy"]


def effective_policy(doc: PolicyDoc, target: int) -> tuple[Any, bool]:
    """``(policy, derived)``: the v1alpha2 policy to evaluate and whether it was converted or rendered.

    A KubeDescheduler the operator refuses to render yields a policy without profiles (DS501/DS502 say why).
    """
    if doc.shape == "kubedescheduler":
        from desched.openshift import RenderError, render

        try:
            return render(doc.root).policy, True
        except RenderError:
            return {"profiles": []}, True
    if doc.api_version != "descheduler/v1alpha1":
        return doc.root, False
    from desched.migrate.convert import convert

    upstream = target < versions.V1ALPHA1_REMOVED
    return convert(doc.root, target=target, strict=False, upstream_compatible=upstream).policy, True
