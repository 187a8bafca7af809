"""(d) Random mutations of valid policies: the structural schema and the structural checker still agree.

A mutation adds a key with a random value to some mapping, or replaces some value by a value of another JSON type.
The envelope (``apiVersion``/``kind`` at the top) is left alone: it is the schema's business, not the checker's.
Known, documented discrepancies are kept out of the generated data (see the ``gap-*`` corpus cases): integral
floats (``5.0``), non-string keys, and non-ASCII text (Unicode digits in durations).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .cases import checker_problems, corpus, schema_errors

BASES = [(case, target) for case in corpus() for target in case.targets if target in case.valid]
Path = tuple[Any, ...]

_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer())
    | _text
)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6
)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _paths(node: Any, path: Path = ()) -> list[Path]:
    """Every path below the root, except the envelope."""
    out: list[Path] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        if path == () and key in ("apiVersion", "kind"):
            continue
        out.append((*path, key))
        out.extend(_paths(value, (*path, key)))
    return out


def _mappings(node: Any, path: Path = ()) -> list[Path]:
    out: list[Path] = [path] if isinstance(node, dict) else []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        out.extend(_mappings(value, (*path, key)))
    return out


def _get(node: Any, path: Path) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Any, int, str, list[str]]:
    case, target = draw(st.sampled_from(BASES))
    data = copy.deepcopy(case.data)
    steps: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if draw(st.booleans()):
            where = draw(st.sampled_from(_mappings(data)))
            mapping = _get(data, where)
            taken = set(mapping) | ({"apiVersion", "kind"} if where == () else set())
            key = draw(_text.filter(lambda k, taken=taken: k not in taken))
            mapping[key] = draw(_values)
            steps.append(f"add {key!r} at {list(where)}")
        else:
            paths = _paths(data)
            if not paths:
                continue
            where = draw(st.sampled_from(paths))
            old = _get(data, where)
            old_type = _json_type(old)
            new = draw(_values.filter(lambda v, old_type=old_type: _json_type(v) != old_type))
            _get(data, where[:-1])[where[-1]] = new
            steps.append(f"set {list(where)} to {new!r}")
    return data, target, case.api, [case.name, *steps]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated())
def test_mutations_keep_schema_and_checker_in_agreement(example: tuple[Any, int, str, list[str]]) -> None:
    data, target, api, story = example
    problems = checker_problems(data, target, api)
    errors = schema_errors(data, target, api)
    assert bool(errors) == bool(problems), (
        f"{story} at v0.{target}: the schema says {errors or 'valid'}, the checker says {problems or 'valid'}"
    )


def test_there_are_valid_bases() -> None:
    assert len({case.name for case, _ in BASES}) >= 20
