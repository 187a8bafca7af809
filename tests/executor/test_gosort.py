"""desched's port of Go's ``sort.Slice`` (executor/gosort.py) against Go's own: every vector in
tables/gosort/vectors.json (made by tables/gosort/main.go with the Go release it records) gives the same order, with a
strict comparator and with a non-strict one (upstream's tie-true comparators)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desched.executor.gosort import sort_slice

TABLE = json.loads((Path(__file__).parent / "tables" / "gosort" / "vectors.json").read_text(encoding="utf-8"))
LESS = {"lt": lambda x, y: x[0] < y[0], "le": lambda x, y: x[0] <= y[0]}


def test_the_vectors_cover_every_branch_size() -> None:
    sizes = {len(vector["keys"]) for vector in TABLE["vectors"]}
    assert {12, 13, 49, 50, 600} <= sizes and TABLE["go"].startswith("go1.")


@pytest.mark.parametrize("vector", TABLE["vectors"], ids=lambda v: f"{v['shape']}-{len(v['keys'])}-{v['less']}")
def test_the_order_is_gos(vector: dict[str, Any]) -> None:
    items = [(key, position) for position, key in enumerate(vector["keys"])]
    assert [position for _, position in sort_slice(items, LESS[vector["less"]])] == vector["order"]


@given(st.lists(st.integers(0, 5), max_size=300))
def test_a_strict_comparator_sorts(keys: list[int]) -> None:
    assert [key for key, _ in sort_slice([(key, i) for i, key in enumerate(keys)], LESS["lt"])] == sorted(keys)
