"""The v1alpha2 policy a document stands for: itself, its v1alpha1 conversion, or what a renderer makes of it.

Everything that reasons about what a policy *does* (the rules on converted and rendered policies, the DS40x rules,
``desched scope``, the webhook's workload checks, the executor) starts from :func:`effective_policy`, the one place
that converts a v1alpha1 policy and the one that decides how upstream-compatible that conversion is. The lint engine
computes it once per policy (``Context.effective``) and hands it on.

Documents of another shape (OpenShift's ``KubeDescheduler``) are rendered, and v1alpha1 policies converted, by the
feature that knows them, named in a table by ``module:function`` and imported on first use, as the CLI resolves its
commands: this model imports no feature package, and no caller has to import one first.
"""

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any, Literal, NamedTuple

from desched import versions
from desched.gitops.documents import PolicyDoc, Shape
from desched.plugins import REGISTRY, Plugin
from desched.policy.model import Policy, decode
from desched.tree import Path

__all__ = [
    "Derivation",
    "Effective",
    "Renderer",
    "derived",
    "effective_policy",
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

#: The renderer of each document shape that stands for a policy without being one, as ``module:function``.
RENDERERS: Mapping[str, str] = {Shape.KUBEDESCHEDULER: "desched.openshift.render:rendered_policy"}
#: The v1alpha1 -> v1alpha2 conversion, as ``module:function`` (only v1alpha1 documents pay for importing it).
CONVERTER = "desched.migrate.convert:convert"


def _resolved(reference: str) -> Any:
    """The function ``module:function`` names, its module imported on first use."""
    module, _, attribute = reference.partition(":")
    return getattr(import_module(module), attribute)


def upstream_compatible(target: int) -> bool:
    """Whether a v1alpha1 policy run by release ``target`` is converted as upstream converts it: up to v0.30 the
    descheduler converts it itself; later releases refuse v1alpha1 and run what ``desched migrate`` writes."""
    return target < versions.V1ALPHA1_REMOVED


def derived(doc: PolicyDoc) -> bool:
    """True when ``doc`` is not run as written: a v1alpha1 policy, or a shape a renderer turns into a policy."""
    return doc.shape in RENDERERS or doc.api_version == "descheduler/v1alpha1"


def effective_policy(
    doc: PolicyDoc, target: int, registry: Mapping[str, Plugin] = REGISTRY, model: Policy | None = None
) -> Effective:
    """The :class:`Effective` policy of ``doc`` run by release ``target`` on a build registering ``registry``;
    ``model`` is the document's own decoding when the caller has it (a written policy is not decoded again).
    """
    if doc.shape in RENDERERS:
        renderer: Renderer = _resolved(RENDERERS[doc.shape])
        rendered = renderer(doc.root)
        if rendered is None:
            return Effective(Policy(()), {"profiles": []}, {}, "refused")
        tree, origins = rendered
        return Effective(decode(tree, registry=registry), tree, origins, "rendered")
    if doc.api_version != "descheduler/v1alpha1":
        written = model if model is not None else decode(doc.root, registry=registry)
        return Effective(written, doc.root, {}, "written")
    conversion = _resolved(CONVERTER)(
        doc.root, target=target, strict=False, upstream_compatible=upstream_compatible(target)
    )
    converted = decode(conversion.policy, registry=registry)
    return Effective(converted, conversion.policy, conversion.origins, "converted")
