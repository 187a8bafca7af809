"""desched.runtime.prometheus writes every value exactly: what a scraper parses back is what was counted."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desched.runtime.prometheus import Counter, Histogram, number
from tests.exposition import parse


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (1234567, "1234567"),
        (1234567.0, "1234567"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740993"),  # an int counter stays exact past 2**53
        (float(2**53), "9007199254740992.0"),  # the first float integer that is not every integer's neighbour...
        (float(2**53 + 1), "9007199254740992.0"),  # ...so 2**53 + 1 cannot be a float: it rounds to 2**53
        (-3.0, "-3"),
        (0.1, "0.1"),
        (2.5, "2.5"),
        (1 / 3, "0.3333333333333333"),
        (1e-07, "1e-07"),
        (1e300, "1e+300"),
        (math.inf, "+Inf"),
        (-math.inf, "-Inf"),
        (math.nan, "NaN"),
    ],
)
def test_values_are_spelled_exactly_as_prometheus_reads_them(value: float, text: str) -> None:
    assert number(value) == text
    assert parse(f"x {number(value)}")["x"].samples[0].text == text  # a spelling Prometheus accepts


@given(st.floats(allow_nan=False))
def test_every_float_reads_back_as_itself(value: float) -> None:
    assert float(number(value)) == value


@given(st.integers())
def test_every_integer_reads_back_as_itself(value: int) -> None:
    assert int(number(value)) == value


def test_a_counter_at_a_million_and_past_2_53_is_written_in_full() -> None:
    counter = Counter("evictions_total", "help", ("node",))
    counter.inc("a", amount=1234567)
    counter.inc("b", amount=2**53)
    counter.inc("b")
    assert counter.render()[2:] == ['evictions_total{node="a"} 1234567', 'evictions_total{node="b"} 9007199254740993']


def test_what_is_rendered_parses_back_to_what_was_counted() -> None:
    counter = Counter("requests_total", "Requests by path", ("path",))
    odd = 'a "quoted" \\ back\nslash'
    counter.inc(odd, amount=1234567)
    counter.inc("/metrics", amount=0.1)
    buckets = (0.01, 0.025, 1, 2.5, 1e6, 2**53)
    histogram = Histogram("latency_seconds", "Latency", buckets, ("path",))
    observed = (0.005, 0.3, 1234567.5, 1e-07)
    for value in observed:
        histogram.observe(value, odd)
    families = parse("\n".join(counter.render() + histogram.render()))

    assert {(s.labels["path"], s.value) for s in families["requests_total"].samples} == {
        (odd, 1234567),
        ("/metrics", 0.1),
    }
    series = families["latency_seconds"]
    assert (series.type, series.help) == ("histogram", "Latency")
    bounds = [(float(s.labels["le"]), s.text) for s in series.samples if s.name.endswith("_bucket")]
    assert bounds == [(float(b), str(h)) for b, h in zip([*buckets, math.inf], [2, 2, 3, 3, 3, 4, 4], strict=True)]
    [total] = [s.value for s in series.samples if s.name == "latency_seconds_sum"]
    assert total == sum(observed)
    assert {s.labels["path"] for s in series.samples} == {odd}
