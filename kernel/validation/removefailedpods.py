"""RemoveFailedPods: ``ValidateRemoveFailedPodsArgs`` (reference §4.12): namespaces and labelSelector rules.

v0.27-v0.33 stop at the first error; v0.34 on aggregate both.
"""

from __future__ import annotations

from typing import Any

from desched.validation.core import ArgError
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemoveFailedPodsArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    return first_only(errors, target, aggregated_since=34)
