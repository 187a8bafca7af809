"""Descheduler release versions as the linter understands them.

Versions are ``v0.NN`` releases; internally a release is its minor number (``36`` for v0.36). The policy API
v1alpha2 exists from v0.27 on, v1alpha1 was removed in v0.31 (docs/policy-api.md#81-api-versions).
"""

from __future__ import annotations

import re

from desched.errors import UsageError

__all__ = ["DEFAULT", "NEWEST", "OLDEST", "V1ALPHA1_REMOVED", "from_option", "parse", "render", "supported"]

OLDEST = 27
NEWEST = 36
DEFAULT = NEWEST
V1ALPHA1_REMOVED = 31

_VERSION = re.compile(r"^v?0\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse(text: str) -> int:
    """Minor number of ``v0.NN``/``0.NN.P``; raises ``ValueError`` for anything else or an unsupported release."""
    match = _VERSION.match(text.strip())
    if not match:
        raise ValueError(f"invalid descheduler version {text!r}: expected v0.NN (for example v0.{NEWEST})")
    minor = int(match.group(1))
    if not OLDEST <= minor <= NEWEST:
        raise ValueError(
            f"unsupported descheduler version {text!r}: supported releases are {render(OLDEST)} to {render(NEWEST)}"
        )
    return minor


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
