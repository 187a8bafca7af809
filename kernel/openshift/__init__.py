"""OpenShift's Kube Descheduler Operator: its ``KubeDescheduler`` resource, validated and rendered.

:func:`problems` lists what the operator or the API server rejects or ignores in a CR, by category; :func:`render`
produces the ``DeschedulerPolicy`` the operator writes into its ConfigMap, with a map from each output path to the
CR path it came from. Pure: no I/O and no heavy imports. Importing the package registers the renderer of
``kubedescheduler`` documents with :func:`desched.policy.effective.register_renderer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desched.documents import Shape
from desched.openshift.model import API_VERSION, FORBIDDEN, KIND, Forbidden
from desched.openshift.render import Environment, RenderError, Rendering, render
from desched.openshift.validate import Problem, problems
from desched.policy.effective import register_renderer
from desched.tree import Path

__all__ = [
    "API_VERSION",
    "FORBIDDEN",
    "KIND",
    "Environment",
    "Forbidden",
    "Problem",
    "RenderError",
    "Rendering",
    "problems",
    "render",
]


def _rendered(kube_descheduler: Mapping[str, Any]) -> tuple[dict[str, Any], dict[Path, Path]] | None:
    """The policy the operator renders from a KubeDescheduler and its origins; ``None`` when it refuses the CR."""
    try:
        rendering = render(kube_descheduler)
    except RenderError:
        return None
    return rendering.policy, rendering.origins


register_renderer(Shape.KUBEDESCHEDULER, _rendered)
