"""RemoveDuplicates: ``ValidateRemoveDuplicatesArgs`` (reference §4.5): the namespaces rule only."""

from __future__ import annotations

from typing import Any

from desched.validation.core import ArgError
from desched.validation.shared import namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemoveDuplicatesArgs`` (unchanged since v0.27 but for aggregation, which cannot matter here)."""
    error = namespaces_rule(args)
    return [error] if error is not None else []
