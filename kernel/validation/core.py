"""The result type of every validator, upstream's error aggregation, and type-defensive readers for raw args.

Validators receive args exactly as decoded from YAML (docs/policy-api.md#12-load-phases: validation runs before
defaulting). A field of the wrong JSON type is read as if it were absent: the strict decoder would have rejected it
already, and another rule reports that, so validators must neither raise nor report it twice.
"""

import math
from typing import Any, NamedTuple

from desched.reading.yamlsrc import key_text
from desched.tree import Path

__all__ = [
    "CODES",
    "ArgError",
    "Path",
    "aggregate",
    "boolean",
    "go_key",
    "integer",
    "items",
    "length",
    "mapping",
    "number",
    "path_key",
    "string",
    "strings",
]


#: ``range``: a threshold outside [0, 100]; ``order``: thresholds[r] > targetThresholds[r]; ``thresholds``: threshold
#: maps missing, empty or naming different resources; ``priority``: priorityThreshold misconfigured; ``version``:
#: upstream rejects a value at the target release that a later release accepts; ``other``: anything else.
CODES = ("range", "order", "thresholds", "priority", "version", "metrics", "other")


class ArgError(NamedTuple):
    """One upstream validation error.

    ``message`` is upstream's text for this single error; ``path`` points at the offending node, relative to the args
    mapping (plugin checks) or to the policy root (policy checks); ``code`` classifies it (see ``CODES``).
    """

    message: str
    path: Path
    code: str = "other"


def aggregate(messages: list[str]) -> str:
    """Render like ``utilerrors.NewAggregate(errs).Error()`` (docs/policy-api.md#14-error-aggregation).

    ``[]`` -> ``""``; one message -> itself; several -> ``[a, b]`` with repeated messages dropped (and a single
    surviving message rendered bare, as apimachinery does).

    >>> aggregate(["a", "b", "a"])
    '[a, b]'
    """
    if not messages:
        return ""
    if len(messages) == 1:
        return messages[0]
    unique: list[str] = []
    for message in messages:
        if message not in unique:
            unique.append(message)
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def mapping(value: Any) -> dict[Any, Any] | None:
    """``value`` if it is a mapping, else ``None`` (absent, null or the wrong type)."""
    return value if isinstance(value, dict) else None


def items(value: Any) -> list[Any] | None:
    """``value`` if it is a list, else ``None``."""
    return value if isinstance(value, list) else None


def length(value: Any) -> int:
    """Go's ``len()`` of a slice or map field: 0 when absent or of the wrong type."""
    return len(value) if isinstance(value, (list, dict)) else 0


def string(value: Any) -> str:
    """A Go ``string`` field: the value when it is a string, else the zero value ``""``."""
    return value if isinstance(value, str) else ""


def strings(value: Any) -> list[tuple[int, str]]:
    """The string elements of a list field with their indexes; other elements are skipped."""
    return [(index, element) for index, element in enumerate(items(value) or []) if isinstance(element, str)]


def boolean(value: Any) -> bool:
    """A Go ``bool`` field: true only for a real ``true``."""
    return value is True


def integer(value: Any) -> int | None:
    """An integer field (``*uint``, ``int32``): ``None`` when absent or not an integral number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def number(value: Any) -> float | None:
    """A ``float64`` field: ``None`` when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def go_key(key: Any) -> str:
    """A YAML mapping key as the JSON object key sigs.k8s.io/yaml turns it into."""
    try:
        return key_text(key)
    except TypeError:
        return str(key)


def path_key(key: Any) -> str | int:
    """A YAML mapping key as a path element: strings and integers as they are, anything else as its JSON key."""
    if isinstance(key, str) or (isinstance(key, int) and not isinstance(key, bool)):
        return key
    return go_key(key)
