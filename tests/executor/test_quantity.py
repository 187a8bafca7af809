"""desched.executor.quantity: apimachinery's ParseQuantity / MilliValue / Value, with Go's scanner quirks."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desched.executor.quantity import (
    int_value,
    milli_value,
    nano_to_resource_value,
    nano_value,
    parse_quantity,
    resource_value,
)

F = Fraction

VALID = [
    ("0", F(0)),
    ("1", F(1)),
    ("500m", F(1, 2)),
    ("1.5", F(3, 2)),
    ("100n", F(100, 10**9)),
    ("3u", F(3, 10**6)),
    ("2k", F(2000)),
    ("5M", F(5 * 10**6)),
    ("7G", F(7 * 10**9)),
    ("1T", F(10**12)),
    ("1P", F(10**15)),
    ("1E", F(10**18)),  # a bare E is the exa suffix, not an exponent
    ("1Ki", F(1024)),
    ("100Mi", F(100 * 2**20)),
    ("1.5Gi", F(3 * 2**29)),
    ("2Ti", F(2 * 2**40)),
    ("1Pi", F(2**50)),
    ("1Ei", F(2**60)),
    ("1e3", F(1000)),
    ("1E3", F(1000)),
    ("1e+3", F(1000)),
    ("25e-1", F(5, 2)),
    ("2e-3", F(2, 1000)),
    ("-1.5", F(-3, 2)),
    ("+2k", F(2000)),
    ("007", F(7)),
    (".5", F(1, 2)),
    ("1.", F(1)),
    ("1.G", F(10**9)),
    (" 42 ", F(42)),  # UnmarshalJSON trims whitespace
    ("12345678901234567890", F(12345678901234567890)),
    # Rounding: away from zero to a whole nano-unit.
    ("0.1n", F(1, 10**9)),
    ("0.1m", F(1, 10**4)),
    ("1.0000000001", F(10**9 + 1, 10**9)),
    ("-0.1n", F(-1, 10**9)),
    ("9.9e-20", F(1, 10**9)),
    # Binary values are capped at 2^63-1.
    ("16Ei", F(2**63 - 1)),
    ("-16Ei", F(-(2**63 - 1))),
    # Go's scanner quirks: no digits but a fast-path suffix parse as zero.
    ("-", F(0)),
    ("+", F(0)),
    (".", F(0)),
    ("m", F(0)),
    ("Ki", F(0)),
    ("e3", F(0)),
    ("0e-20", F(0)),
    # JSON numbers
    (3, F(3)),
    (-2, F(-2)),
    (2.5, F(5, 2)),
    (1e-05, F(1, 10**5)),
    (1e16, F(10**16)),
]


@pytest.mark.parametrize(("text", "expected"), VALID, ids=[repr(text) for text, _ in VALID])
def test_parse_quantity_valid(text, expected):
    assert parse_quantity(text) == expected
    assert parse_quantity(text) == expected  # a second (cached) lookup gives the same


INVALID = [
    "",
    "   ",
    "abc",
    "1x",
    "1.5.5",
    "1e",
    "1e-",
    "1eE3",
    "1Kii",
    "1KI",
    "1ki",
    "--1",
    "1m3",
    "1e3.5",
    "1 2",
    "0x10",
    "1_000",
    "Pi",  # no digits and outside Go's fast path
    "Ei",
    "e-20",
    "1e401",
    "١",  # non-ASCII digit
    True,
    None,
    float("inf"),
    float("nan"),
    [1],
]


@pytest.mark.parametrize("text", INVALID, ids=[repr(text) for text in INVALID])
def test_parse_quantity_invalid(text):
    with pytest.raises(ValueError):
        parse_quantity(text)
    with pytest.raises(ValueError):
        milli_value(text)


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("0", 0, 0),
        ("1", 1000, 1),
        ("250m", 250, 1),  # Value() rounds up
        ("1n", 1, 1),  # MilliValue() rounds up
        ("1500u", 2, 1),
        ("2Gi", 2 * 2**30 * 1000, 2 * 2**30),
        ("1.5", 1500, 2),
        ("-1.5", -1500, -2),  # Go's int64 path rounds the magnitude up below zero
        ("-1n", -1, -1),
        ("128974848", 128974848000, 128974848),
        ("129e6", 129000000000, 129000000),
        ("123Mi", 128974848000, 128974848),
    ],
)
def test_milli_and_int_value(text, milli, whole):
    assert milli_value(text) == milli
    assert int_value(text) == whole


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("cpu", "2", 2000),
        ("cpu", "100m", 100),
        ("cpu", "0.5m", 1),
        ("memory", "1Ki", 1024),
        ("memory", "0.5", 1),
        ("pods", "110", 110),
        ("ephemeral-storage", "10G", 10 * 10**9),
        ("example.com/gpu", "3", 3),
        ("hugepages-2Mi", "1Gi", 2**30),
    ],
)
def test_resource_value_units(name, text, expected):
    assert resource_value(name, text) == expected
    assert nano_to_resource_value(name, nano_value(text)) == expected


# --- properties -----------------------------------------------------------------------------------------------------

DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


@given(st.integers(0, 10**15), st.sampled_from(sorted(DECIMAL_SUFFIXES)))
def test_integer_with_decimal_suffix_round_trips(number, suffix):
    assert parse_quantity(f"{number}{suffix}") == number * Fraction(10) ** DECIMAL_SUFFIXES[suffix]


@given(st.integers(0, 2**20), st.sampled_from(sorted(BINARY_SUFFIXES)))
def test_integer_with_binary_suffix_round_trips(number, suffix):
    expected = min(number * 2 ** BINARY_SUFFIXES[suffix], 2**63 - 1)
    assert parse_quantity(f"{number}{suffix}") == expected


@given(st.integers(-(10**12), 10**12), st.integers(-12, 12))
def test_exponent_form_matches_value(mantissa, exponent):
    exact = mantissa * Fraction(10) ** exponent
    parsed = parse_quantity(f"{mantissa}e{exponent}")
    # exact at nano precision, otherwise rounded away from zero by less than one nano-unit
    assert abs(parsed) >= abs(exact)
    assert abs(parsed - exact) < Fraction(1, 10**9)
    assert parsed * 10**9 == int(parsed * 10**9)


@given(st.integers(0, 10**15))
def test_milli_round_trip(milli):
    assert milli_value(f"{milli}m") == milli
    assert resource_value("cpu", f"{milli}m") == milli
    assert int_value(f"{milli}m") == -(-milli // 1000)


decimals = st.decimals(min_value=-(10**9), max_value=10**9, places=9, allow_nan=False, allow_infinity=False)


@given(decimals)
def test_plain_decimal_strings_are_exact(number):
    text = format(number, "f")
    assert parse_quantity(text) == Fraction(Decimal(text))


@given(decimals, decimals)
def test_milli_and_int_value_are_monotonic(a, b):
    low, high = sorted((a, b))
    assert milli_value(format(low, "f")) <= milli_value(format(high, "f"))
    assert int_value(format(low, "f")) <= int_value(format(high, "f"))


@given(decimals)
def test_milli_value_rounds_the_magnitude_up(number):
    text = format(number, "f")
    exact = Fraction(Decimal(text)) * 1000
    if exact >= 0:
        assert exact <= milli_value(text) < exact + 1  # the ceiling
    else:
        assert exact - 1 < milli_value(text) <= exact


@pytest.mark.parametrize("text", ["1" * 4400, "0." + "1" * 4400, "1" * 700 + "Ki", "1" * 641])
def test_a_number_of_more_digits_than_desched_reads_is_refused_in_desched_words(text: str) -> None:
    """Past Python's own integer-conversion limit (4,300 digits) the message was Python's."""
    from desched.executor.quantity import MAX_DIGITS

    with pytest.raises(
        ValueError, match=f"has {len(text.rstrip('Ki').replace('.', ''))} digits; desched reads at most {MAX_DIGITS}"
    ):
        nano_value(text)
    assert nano_value("1" * MAX_DIGITS) > 0
