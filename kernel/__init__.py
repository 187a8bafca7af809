"""desched: lint, migrate, admit and run Kubernetes descheduler policies.

The library surface is what ``__all__`` lists: :func:`lint_paths` and :func:`lint_text` (findings for files or one
text), :class:`Finding`, :class:`Settings`, :func:`load_config` with :func:`settings_from`, and the exception base
:class:`DeschedError`. Everything else is internal and may change.

This package's own modules are the kernel every command shares (policy types, loading with positions, the plugin
registry, errors, the kube client, metrics); ``desched.linter``, ``desched.webhook`` and ``desched.executor`` build
on it. The names above are imported on first use, so ``import desched`` stays cheap, and nothing here imports
``kubernetes``, ``fastapi``, ``uvicorn`` or ``cryptography``: the lint path runs in pre-commit on every commit.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from desched.errors import DeschedError
from desched.version import __version__

if TYPE_CHECKING:
    from desched.linter.engine import FileResult, Settings, lint_text
    from desched.linter.finding import Finding
    from desched.linter.lint import LintRun, lint_paths, load_config, settings_from

__all__ = [
    "DeschedError",
    "FileResult",
    "Finding",
    "LintRun",
    "Settings",
    "__version__",
    "lint_paths",
    "lint_text",
    "load_config",
    "settings_from",
]

# The library surface, by the module that defines each name (imported on first access).
_EXPORTS = {
    "FileResult": "desched.linter.engine",
    "Settings": "desched.linter.engine",
    "lint_text": "desched.linter.engine",
    "Finding": "desched.linter.finding",
    "LintRun": "desched.linter.lint",
    "lint_paths": "desched.linter.lint",
    "load_config": "desched.linter.lint",
    "settings_from": "desched.linter.lint",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'desched' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
