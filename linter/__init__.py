"""desched's light core: find descheduler policies in YAML, check them, report findings.

Nothing here imports ``kubernetes``, ``fastapi``, ``uvicorn``, ``cryptography`` or ``jsonschema``: the lint path
runs in pre-commit on every commit and must start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"
