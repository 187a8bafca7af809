"""The optional parts of desched and what they need: ``pip install 'desched[EXTRA]'``.

The core install (lint, migrate, scope, render, rules, explain) needs PyYAML only. Commands and code paths that need
more name their extra; :func:`require` turns a missing package into one :class:`~desched.errors.UsageError` line
that says what to install, before anything is imported.
"""

from __future__ import annotations

from importlib.util import find_spec

from desched.errors import UsageError

__all__ = ["EXTRAS", "missing", "require"]

# Import names each extra brings (pyproject.toml's optional dependencies; tests/test_install.py checks they agree).
EXTRAS: dict[str, tuple[str, ...]] = {
    "executor": ("kubernetes", "cryptography"),
    "webhook": ("fastapi", "uvicorn", "kubernetes", "cryptography"),
}


def missing(extra: str) -> list[str]:
    """The packages of ``extra`` that cannot be imported here."""
    return [name for name in EXTRAS[extra] if find_spec(name) is None]


def require(extra: str, what: str) -> None:
    """Raise :class:`~desched.errors.UsageError` naming the install command when ``extra`` is incomplete."""
    absent = missing(extra)
    if absent:
        raise UsageError(f"{what} needs {', '.join(absent)}: pip install 'desched[{extra}]'")
