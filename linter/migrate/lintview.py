"""A v1alpha1 policy seen through its conversion, so that the v1alpha2 rules can lint it (issue: migration).

Rules see the converted policy; every position and path they report is mapped back to the v1alpha1 source, so
findings point at the lines the user wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..documents import PolicyDoc
from ..yamlsrc import Position
from .convert import Path, locate

__all__ = ["ConvertedDoc"]


class ConvertedDoc(PolicyDoc):
    """``root`` is the converted policy; ``origins`` maps its paths to the v1alpha1 paths they were made from."""

    __slots__ = ("origins", "source")

    def __init__(self, source: PolicyDoc, converted: Any, origins: dict[Path, Path]) -> None:
        super().__init__(
            source.file, converted, "descheduler/v1alpha2", "DeschedulerPolicy", source.shape, source.object,
            source.envelope, version_hint=source.version_hint, extra=source.extra,
        )  # fmt: skip
        self.source = source
        self.origins = origins

    def source_path(self, path: Sequence[str | int]) -> tuple[str | int, ...]:
        return locate(self.origins, tuple(path))

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        exact = tuple(path) in self.origins
        return self.source.position(self.source_path(path), key=key and exact)
