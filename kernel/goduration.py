"""Go's ``time.ParseDuration`` and ``time.Duration.String()``, for the policy fields and flags written as durations."""

from __future__ import annotations

import re

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
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``time.ParseDuration``); raises ``ValueError`` like Go refuses."""
    rest = text
    sign = 1
    if rest[:1] in "+-" and rest:
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0
    while rest:
        match = _PART.match(rest)
        if not match:
            raise ValueError(f'time: invalid duration "{text}"')
        number, unit = match.groups()
        whole, _, fraction = number.partition(".")
        scale = _UNITS[unit]
        total += int(whole or "0") * scale
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
        rest = rest[match.end() :]
    return sign * total


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
