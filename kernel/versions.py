"""Descheduler release versions as the linter understands them.

Versions are ``v0.NN`` releases; internally a release is its minor number (``36`` for v0.36). The policy API
v1alpha2 exists from v0.27 on, v1alpha1 was removed in v0.31 (docs/policy-api.md#81-api-versions).

The cluster's Kubernetes version (``kubernetes-version`` in ``.desched.yaml``, ``--kubernetes-version``) is a
:class:`KubernetesVersion`: ``1.NN`` or ``v1.NN.P``, with the suffix a managed provider's server reports
(``v1.30.2-eks-1234567``, ``v1.30.2+k3s1``) accepted and ignored.
"""

from typing import Any, NamedTuple

from desched.errors import UsageError
from desched.patterns import lazy

__all__ = [
    "DEFAULT", "NEWEST", "OLDEST", "V1ALPHA1_REMOVED", "KubernetesVersion", "from_option", "kubernetes_from_option",
    "parse", "parse_kubernetes", "release_version", "render", "supported",
]  # fmt: skip

OLDEST = 27
NEWEST = 36
DEFAULT = NEWEST
V1ALPHA1_REMOVED = 31

_VERSION = lazy(r"^v?0\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


def parse(text: str) -> int:
    """Minor number of ``v0.NN``/``0.NN.P``; raises ``ValueError`` for anything else or an unsupported release."""
    match = _VERSION().match(text.strip())
    if not match:
        raise ValueError(f"invalid descheduler version {text!r}: expected v0.NN (for example v0.{NEWEST})")
    minor = int(match.group(1))
    if not OLDEST <= minor <= NEWEST:
        raise ValueError(
            f"unsupported descheduler version {text!r}: supported releases are {render(OLDEST)} to {render(NEWEST)}"
        )
    return minor


def release_version(text: Any) -> tuple[int, str] | None:
    """The minor and ``v0.NN[.P]`` form of a descheduler version as deployments write it (an image tag, a chart's
    appVersion, a ``--target-version``), supported or not; ``None`` for anything else."""
    if not isinstance(text, str):
        return None
    match = _VERSION().match(text.strip())
    if not match:
        return None
    patch = f".{match.group(2)}" if match.group(2) is not None else ""
    return int(match.group(1)), f"v0.{match.group(1)}{patch}"


def from_option(text: str | None) -> int | None:
    """A ``--target-version`` value as a minor number (``None`` when not given); raises
    :class:`~desched.errors.UsageError` for anything :func:`parse` refuses."""
    if not text:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def render(minor: int) -> str:
    return f"v0.{minor}"


def supported() -> list[str]:
    return [render(minor) for minor in range(OLDEST, NEWEST + 1)]


_KUBERNETES = lazy(r"^v?1\.(0|[1-9]\d{0,2})(?:\.(0|[1-9]\d*)(?:[-+][0-9A-Za-z.+-]*)?)?$")


class KubernetesVersion(NamedTuple):
    """The Kubernetes version of the cluster the descheduler runs on, as configured: its ``minor`` (30 for 1.30),
    ``text`` as findings show it (``1.30`` or ``1.30.2``) and ``source``, where it was set (how findings name it)."""

    minor: int
    text: str
    source: str


def parse_kubernetes(text: str, source: str = "--kubernetes-version") -> KubernetesVersion:
    """``1.NN``, ``v1.NN`` or ``v1.NN.P`` (a provider's suffix after the patch ignored) as a
    :class:`KubernetesVersion` set by ``source``; raises ``ValueError`` for anything else."""
    match = _KUBERNETES().match(text.strip())
    if not match and _VERSION().match(text.strip()):
        raise ValueError(
            f"invalid Kubernetes version {text!r}: that is a descheduler release; expected the cluster's Kubernetes "
            f"version, 1.NN or v1.NN.P (for example 1.{NEWEST})"
        )
    if not match:
        raise ValueError(
            f"invalid Kubernetes version {text!r}: expected 1.NN or v1.NN.P, the cluster's version (for example "
            f"1.{NEWEST} or v1.{NEWEST}.2; `kubectl version` shows it as Server Version)"
        )
    minor, patch = match.group(1), match.group(2)
    return KubernetesVersion(int(minor), f"1.{minor}" + (f".{patch}" if patch is not None else ""), source)


def kubernetes_from_option(text: str | None) -> KubernetesVersion | None:
    """A ``--kubernetes-version`` value (``None`` when not given); raises :class:`~desched.errors.UsageError` for
    anything :func:`parse_kubernetes` refuses."""
    if text is None:
        return None
    try:
        return parse_kubernetes(text)
    except ValueError as exc:
        raise UsageError(f"--kubernetes-version: {exc}") from None
