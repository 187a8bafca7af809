"""Go's ``time.ParseDuration`` and ``time.Duration.String()``, for the policy fields and flags written as durations."""

from __future__ import annotations

from desched.patterns import lazy

__all__ = ["format_duration", "parse_duration"]

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_PART = lazy(r"([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)")
_LIMIT = 1 << 63  # Go accumulates the magnitude in a uint64: at most 1<<63 (int64's minimum), 1<<63 - 1 when positive


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``time.ParseDuration``); raises ``ValueError`` like Go refuses, also a
    duration beyond int64 nanoseconds (Go's overflow checks, its float64 arithmetic for a fraction included)."""
    rest = text
    sign = 1
    if rest[:1] in "+-" and rest:
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if rest == "0":
        return 0
    invalid = ValueError(f'time: invalid duration "{text}"')
    if not rest:
        raise invalid
    total = 0
    while rest:
        match = _PART().match(rest)
        if not match or not (match[1] or match[2]):
            raise invalid
        whole, fraction, unit = match.groups()
        scale = _UNITS[unit]
        if len(whole.lstrip("0")) > 19:  # Go's leadingInt refuses more than 1<<63 (19 digits)
            raise invalid
        value = int(whole or "0")
        if value > _LIMIT // scale:  # leadingInt's limit, then Go's check before whole * unit
            raise invalid
        value *= scale
        digits, precision = _leading_fraction(fraction or "")
        if digits:
            value += int(float(digits) * (float(scale) / precision))
            if value > _LIMIT:
                raise invalid
        total = (total + value) % (1 << 64)  # uint64 addition, as Go's
        if total > _LIMIT:
            raise invalid
        rest = rest[match.end() :]
    if sign > 0 and total == _LIMIT:
        raise invalid
    return sign * total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """Go's ``leadingFraction``: the digits as an integer and 10 to the number of digits kept; digits that would take
    the integer past 1<<63 are dropped (precision, never an error)."""
    value, precision = 0, 1.0
    for digit in digits:
        following = value * 10 + int(digit)
        if value > (_LIMIT - 1) // 10 or following > _LIMIT:
            break
        value, precision = following, precision * 10
    return value, precision


def format_duration(nanoseconds: int) -> str:
    """Go's ``time.Duration.String()``: ``15m0s``, ``6h0m0s``, ``1.5s``, ``300ms``, ``0s``."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    value = abs(nanoseconds)
    if value < 10**9:
        for unit, scale in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if value >= scale:
                return sign + _fraction(value, scale) + unit
    seconds, rest = divmod(value, 10**9)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = _fraction(seconds * 10**9 + rest, 10**9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
