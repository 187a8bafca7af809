"""OpenShift's Kube Descheduler Operator: its ``KubeDescheduler`` resource, validated and rendered.

:func:`problems` lists what the operator or the API server rejects or ignores in a CR, by category; :func:`render`
produces the ``DeschedulerPolicy`` the operator writes into its ConfigMap, with a map from each output path to the
CR path it came from. Pure: no I/O and no heavy imports. :func:`desched.policy.effective.effective_policy` reaches
:func:`desched.openshift.render.rendered_policy` by name for ``kubedescheduler`` documents.
"""

from __future__ import annotations

from desched.openshift.model import API_VERSION, FORBIDDEN, KIND, Forbidden
from desched.openshift.render import Environment, RenderError, Rendering, render
from desched.openshift.validate import Problem, problems

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
