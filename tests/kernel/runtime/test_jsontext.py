"""desched.runtime.jsontext.dumps writes exactly what json.dumps(value, indent=2) writes."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desched.runtime.jsontext import dumps, write

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=40
)


@settings(max_examples=500)
@given(VALUES)
def test_the_text_is_json_dumps_indent_2(value):
    assert dumps(value) == json.dumps(value, indent=2)
    stream = io.StringIO()
    write(value, stream)
    assert stream.getvalue() == dumps(value)


def test_a_simulate_report_and_what_json_refuses():
    report = {"evictions": [{"namespace": "ns", "pod": "p", "node": "n"}], "summary": {"evicted": 1, "byNode": {}}}
    assert dumps(report) == json.dumps(report, indent=2)
    assert dumps((1, [2.5, float("inf")], "é")) == json.dumps((1, [2.5, float("inf")], "é"), indent=2)
    for bad in ({"a": object()}, {(1, 2): 3}):
        with pytest.raises(TypeError):
            json.dumps(bad, indent=2)
        with pytest.raises(TypeError):
            dumps(bad)
