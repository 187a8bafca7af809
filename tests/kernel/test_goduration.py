"""``desched.goduration.parse_duration`` against Go's ``time.ParseDuration``: the cases of Go's own tables
(``time/time_test.go``, ``parseDurationTests`` and ``parseDurationErrorTests``), written out here, and Go's overflow
rules (``time/format.go``): a magnitude beyond int64 nanoseconds is an invalid duration."""

from __future__ import annotations

import pytest

from desched.goduration import format_duration, parse_duration

NS, US, MS, S = 1, 1_000, 1_000_000, 1_000_000_000
M, H = 60 * S, 3600 * S
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)

ACCEPTED = [
    # plain numbers, signs and zero
    ("0", 0),
    ("+0", 0),
    ("-0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    ("+5s", 5 * S),
    ("-5s", -5 * S),
    # fractions
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S),
    (".5s", 500 * MS),
    ("1.0s", S),
    ("1.00s", S),
    ("1.004s", S + 4 * MS),
    ("1.0040s", S + 4 * MS),
    ("100.00100s", 100 * S + MS),
    # every unit, both micro signs
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12\u00b5s", 12 * US),
    ("12\u03bcs", 12 * US),
    ("13ms", 13 * MS),
    ("14s", 14 * S),
    ("15m", 15 * M),
    ("16h", 16 * H),
    # several parts, in any order
    ("3h30m", 3 * H + 30 * M),
    ("10.5s4m", 4 * M + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
    # large values, exactly (2**53 + 1 has no float64 of its own)
    ("52763797000ns", 52_763_797_000),
    ("9007199254740993ns", 2**53 + 1),
    # more than 9 fractional digits (Go issue 6617), a very long fraction (issue 15011), and the fraction whose
    # digits reach leadingFraction's first overflow check
    ("0.3333333333333333333h", 20 * M),
    ("0.100000000000000000000h", 6 * M),
    ("0.830103483285477580700h", 49 * M + 48 * S + 372_539_827),
    # the extremes of int64 nanoseconds, reached in one part, with a fraction, or across parts
    ("9223372036854775807ns", INT64_MAX),
    ("9223372036854775.807us", INT64_MAX),
    ("9223372036s854ms775us807ns", INT64_MAX),
    ("-9223372036854775808ns", INT64_MIN),
    ("-9223372036854775.808us", INT64_MIN),
    ("-9223372036s854ms775us808ns", INT64_MIN),
    ("-2562047h47m16.854775808s", INT64_MIN),  # the smallest value Duration.String() prints (Go issue 48629)
    # leading zeros do not count toward leadingInt's limit
    ("0000000000000000000000000009223372036854775807ns", INT64_MAX),
    # Go sums the parts in a uint64: two halves of 2**64 wrap to zero, which Go accepts
    ("9223372036854775808ns9223372036854775808ns", 0),
]

REFUSED = [
    # not a duration
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\x85\x85",
    "\ufffd",
    "\ufffd hello \ufffd world",
    "\u0663s",  # a decimal digit, but not [0-9]
    # beyond int64 nanoseconds
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
    "99999999999999999999ns",  # leadingInt's own overflow, before the unit is known
    "2562047h47m16.854775808s",  # the fraction takes the part past int64
    "1h9223372036854775807ns",  # the sum of the parts does
]


@pytest.mark.parametrize(("text", "nanoseconds"), ACCEPTED)
def test_go_accepts(text: str, nanoseconds: int) -> None:
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize("text", REFUSED)
def test_go_refuses(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)
    assert str(refused.value) == f'time: invalid duration "{text}"'


def test_the_extremes_round_trip() -> None:
    assert format_duration(INT64_MIN) == "-2562047h47m16.854775808s"
    assert parse_duration(format_duration(INT64_MIN)) == INT64_MIN
    assert parse_duration(format_duration(INT64_MAX)) == INT64_MAX
