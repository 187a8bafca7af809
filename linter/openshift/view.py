"""A KubeDescheduler seen through the policy the operator renders, so that the policy rules can lint it.

Rules see the rendered ``DeschedulerPolicy``; every position and path they report is mapped back to the
KubeDescheduler, so findings point at the lines the user wrote (the pattern of :mod:`linter.migrate.lintview`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..documents import PolicyDoc
from ..yamlsrc import Position

__all__ = ["RenderedDoc", "source_path"]

Path = tuple[str | int, ...]


def source_path(origins: Mapping[Path, Path], path: Path) -> Path:
    """The CR path of output ``path``, or of its nearest ancestor that has one (``()`` if none)."""
    for end in range(len(path), -1, -1):
        found = origins.get(path[:end])
        if found is not None:
            return found
    return ()


class RenderedDoc(PolicyDoc):
    """``root`` is the rendered policy; ``origins`` maps its paths to the KubeDescheduler paths they came from."""

    __slots__ = ("origins", "source")

    def __init__(self, source: PolicyDoc, rendered: Any, origins: dict[Path, Path]) -> None:
        super().__init__(
            source.file, rendered, "descheduler/v1alpha2", "DeschedulerPolicy", "rendered", source.object,
            source.envelope, version_hint=source.version_hint, extra=source.extra,
        )  # fmt: skip
        self.source = source
        self.origins = origins

    def source_path(self, path: Sequence[str | int]) -> tuple[str | int, ...]:
        return source_path(self.origins, tuple(path))

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        exact = tuple(path) in self.origins
        return self.source.position(self.source_path(path), key=key and exact)
