"""The v1alpha2 policy a document stands for: itself, its v1alpha1 conversion, or what a renderer makes of it.

Everything that reasons about what a policy *does* (the rules on converted and rendered policies, the DS40x rules,
``desched scope``, the webhook's workload checks, the executor) starts from :func:`effective_policy`, the one place
that converts a v1alpha1 policy and the one that decides how upstream-compatible that conversion is. The lint engine
computes it once per policy (``Context.effective``) and hands it on.

Documents of another shape (OpenShift's ``KubeDescheduler``) are rendered by the feature that knows them: it
registers a :data:`Renderer` for its shape with :func:`register_renderer` when imported (``desched.openshift``
does), so this model imports no feature package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from desched import versions
from desched.documents import PolicyDoc, Shape
from desched.plugins import REGISTRY, Plugin
from desched.policy.model import Policy, decode
from desched.tree import Path

__all__ = [
    "Derivation",
    "Effective",
    "Renderer",
    "derived",
    "effective_policy",
    "register_renderer",
    "upstream_compatible",
]


#: How the effective policy was obtained from the document: ``written`` (a v1alpha2 policy, run as it is),
#: ``converted`` (a v1alpha1 policy), ``rendered`` (by the feature registered for the document's shape) or
#: ``refused`` (that feature refuses to render it: no profiles run, its rules say why). A ``Literal`` rather than an
#: enum: this module is on the lint path of every policy, and an enum class costs its import more than the check.
Derivation = Literal["written", "converted", "rendered", "refused"]


class Effective(NamedTuple):
    """The policy the descheduler runs for a document: its typed ``policy``, the v1alpha2 ``tree`` it is decoded
    from, ``origins`` mapping each path of a derived tree to the document path it came from (empty for a written
    policy), and how it was obtained."""

    policy: Policy
    tree: Mapping[str, Any]
    origins: dict[Path, Path]
    derivation: Derivation

    @property
    def derived(self) -> bool:
        """True when the document was converted or rendered, not run as written."""
        return self.derivation != "written"


#: A document shape's renderer: ``(tree, origins)`` of the v1alpha2 policy a document of that shape stands for, or
#: ``None`` when the document is refused (nothing runs).
Renderer = Callable[[Mapping[str, Any]], "tuple[dict[str, Any], dict[Path, Path]] | None"]

_RENDERERS: dict[str, Renderer] = {}


def register_renderer(shape: str, renderer: Renderer) -> None:
    """Make ``renderer`` the one that turns documents of ``shape`` into policies (a feature calls this on import)."""
    _RENDERERS[shape] = renderer


def upstream_compatible(target: int) -> bool:
    """Whether a v1alpha1 policy run by release ``target`` is converted as upstream converts it: up to v0.30 the
    descheduler converts it itself; later releases refuse v1alpha1 and run what ``desched migrate`` writes."""
    return target < versions.V1ALPHA1_REMOVED


def derived(doc: PolicyDoc) -> bool:
    """True when ``doc`` is not run as written: a v1alpha1 policy, or a shape a renderer turns into a policy."""
    return doc.shape in _RENDERERS or doc.shape == Shape.KUBEDESCHEDULER or doc.api_version == "descheduler/v1alpha1"


def effective_policy(
    doc: PolicyDoc, target: int, registry: Mapping[str, Plugin] = REGISTRY, model: Policy | None = None
) -> Effective:
    """The :class:`Effective` policy of ``doc`` run by release ``target`` on a build registering ``registry``;
    ``model`` is the document's own decoding when the caller has it (a written policy is not decoded again).

    Raises ``LookupError`` for a shape that needs a renderer no imported feature registered.
    """
    if doc.shape in _RENDERERS:
        rendered = _RENDERERS[doc.shape](doc.root)
        if rendered is None:
            return Effective(Policy(()), {"profiles": []}, {}, "refused")
        tree, origins = rendered
        return Effective(decode(tree, registry=registry), tree, origins, "rendered")
    if doc.shape == Shape.KUBEDESCHEDULER:  # desched.openshift renders it
        raise LookupError(f"no renderer registered for {doc.shape} documents (import desched.openshift)")
    if doc.api_version != "descheduler/v1alpha1":
        written = model if model is not None else decode(doc.root, registry=registry)
        return Effective(written, doc.root, {}, "written")
    from desched.migrate.convert import convert  # only v1alpha1 documents pay for it

    conversion = convert(doc.root, target=target, strict=False, upstream_compatible=upstream_compatible(target))
    converted = decode(conversion.policy, registry=registry)
    return Effective(converted, conversion.policy, conversion.origins, "converted")
