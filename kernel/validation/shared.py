"""Rules several plugin validators share: the namespaces rule and the labelSelector rule
(docs/policy-api.md#41-shared-argument-types)."""

from __future__ import annotations

from typing import Any

from desched.validation.core import ArgError, length, mapping
from desched.validation.labels import label_selector_problem

__all__ = ["LABEL_SELECTOR_PREFIX", "first_only", "label_selector_rule", "namespaces_rule"]

LABEL_SELECTOR_PREFIX = "failed to get label selectors from strategy's params: "


def namespaces_rule(args: dict[Any, Any], key: str = "namespaces") -> ArgError | None:
    """``only one of Include/Exclude namespaces can be set`` when both lists are non-empty."""
    namespaces = mapping(args.get(key))
    if namespaces is not None and length(namespaces.get("include")) > 0 and length(namespaces.get("exclude")) > 0:
        return ArgError("only one of Include/Exclude namespaces can be set", (key,))
    return None


def label_selector_rule(args: dict[Any, Any], target: int, key: str = "labelSelector") -> ArgError | None:
    """``failed to get label selectors from strategy's params: <err>`` when ``LabelSelectorAsSelector`` fails."""
    problem = label_selector_problem(args.get(key), target)
    if problem is None:
        return None
    text, path = problem
    return ArgError(LABEL_SELECTOR_PREFIX + text, (key, *path))


def first_only(errors: list[ArgError], target: int, aggregated_since: int) -> list[ArgError]:
    """Releases before ``aggregated_since`` returned at the first failing check; later ones aggregate them all."""
    return errors[:1] if target < aggregated_since else errors
