"""desched: lint, migrate, admit and run Kubernetes descheduler policies.

This package's own modules are the kernel every command shares (policy types, loading with positions, the plugin
registry, errors, the kube client, metrics); ``desched.linter``, ``desched.webhook`` and ``desched.executor`` build
on it. Nothing here imports ``kubernetes``, ``fastapi``, ``uvicorn`` or ``cryptography`` at import time: the lint
path runs in pre-commit on every commit and must start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"
