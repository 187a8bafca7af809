"""Kubernetes ``resource.Quantity`` parsing, as apimachinery's ``ParseQuantity`` reads a JSON value.

Contract:

* Grammar: ``<sign>?<digits>[.<digits>]<suffix>`` where the suffix is a decimal SI one (``n u m "" k M G T P E``), a
  binary SI one (``Ki Mi Gi Ti Pi Ei``) or a decimal exponent (``e<int>`` / ``E<int>``). Surrounding whitespace is
  ignored (``Quantity.UnmarshalJSON`` trims it). Go's scanner quirks are kept: a lone sign, ``.``, or a bare suffix
  whose value fits the fast path (``"m"``, ``"Ki"``, ``"e3"``) parse as 0; ``"Pi"``, ``"Ei"`` and ``"e-10"`` without
  digits are errors.
* The value is exact, then rounded *away from zero* to a multiple of 10^-9 (``0.1n`` is ``1n``); binary-suffixed values
  are capped at 2^63-1 in magnitude, as upstream does.
* A number of more than :data:`MAX_DIGITS` digits raises :class:`ValueError` (Go would read it, as a value far past
  any resource).
* JSON numbers are accepted: ``int`` exactly, ``float`` through its ``repr``. ``bool``, ``None``, NaN/inf, other types
  and malformed strings raise :class:`ValueError`.
* :func:`milli_value` / :func:`int_value` are ``Quantity.MilliValue()`` / ``Quantity.Value()``: the ceiling of q*1000 /
  q. Below zero the magnitude is rounded up instead (``-1.5`` gives ``-2``), as Go's int64 representation does;
  Kubernetes never stores negative requests or capacities. :func:`resource_value` is the unit every executor
  comparison uses (docs/executor-semantics.md#71-effective-requests): millicores for ``cpu``, whole units for anything
  else.

Parsed strings are cached (the cluster holds few distinct quantity strings), so repeated calls are dictionary lookups.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "MAX_DIGITS",
    "NANO",
    "int_value",
    "milli_value",
    "nano_to_resource_value",
    "nano_value",
    "parse_quantity",
    "resource_value",
]

NANO = 10**9
"""Nano-units per unit: :func:`nano_value` returns the quantity times this."""

_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_INT64_TEXT = re.compile(r"[+-]?[0-9]+")
_MAX_INT64 = 2**63 - 1
_BINARY_CAP_NANO = _MAX_INT64 * NANO
# Decimal exponents beyond this are far outside int64 in any unit; refuse them instead of building huge integers.
_MAX_EXPONENT = 400
#: The most digits a quantity's number may have: Python's smallest integer-conversion limit (640, whatever
#: ``sys.set_int_max_str_digits`` says), far above any real amount (int64 has 19)
MAX_DIGITS = 640
_CACHE_LIMIT = 1 << 16
_cache: dict[str, int] = {}


def _pow10(exponent: int) -> int:
    """10**exponent for exponent >= 0, typed as int."""
    return int(10**exponent)


def _parse_go_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: None when it fails."""
    if _INT64_TEXT.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -(2**63) <= value <= _MAX_INT64 else None


class _Parts(NamedTuple):
    """A quantity's text split as Go's ``parseQuantityString`` splits it."""

    negative: bool
    num: str  # integer digits, leading zeros dropped ("0" when none)
    denom: str  # fraction digits
    number_end: int  # where the suffix starts in the stripped text
    suffix: str


def _digits_end(s: str, pos: int) -> int:
    while pos < len(s) and s[pos] in _DIGITS:
        pos += 1
    return pos


def _split(s: str, text: str) -> _Parts | None:
    """The sign, digits, fraction and suffix of the stripped quantity ``s``; None for a zero written with only a
    sign and zeros. ValueError when the text does not match the quantity syntax."""
    end = len(s)
    negative = s[0] == "-"
    pos = 1 if s[0] in "+-" else 0
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:
        return None  # only a sign and zeros
    start, pos = pos, _digits_end(s, pos)
    num = s[start:pos] or "0"
    denom = ""
    if pos < end and s[pos] == ".":
        start, pos = pos + 1, _digits_end(s, pos + 1)
        denom = s[start:pos]
    number_end = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    if _digits_end(s, pos) < end:
        raise ValueError(f"quantity {text!r} does not match the quantity syntax")
    return _Parts(negative, num, denom, number_end, s[number_end:])


def _exponent(suffix: str, text: str) -> tuple[int, bool]:
    """The exponent a suffix stands for and whether it is binary (powers of 1024 written as powers of 2)."""
    if suffix in _DECIMAL_SUFFIXES:
        return _DECIMAL_SUFFIXES[suffix], False
    if suffix in _BINARY_SUFFIXES:
        return _BINARY_SUFFIXES[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = _parse_go_int64(suffix[1:])
        if parsed is None:
            raise ValueError(f"quantity {text!r} has an invalid exponent")
        return ((parsed + 2**31) % 2**32) - 2**31, False  # Go keeps it as int32
    raise ValueError(f"quantity {text!r} has an unknown suffix {suffix!r}")


def _scaled(parts: _Parts, exponent: int, binary: bool, text: str) -> int:
    """The magnitude in nano-units, rounded up as Go's ``ScaledValue`` rounds."""
    digits = len(parts.num) + len(parts.denom)
    if digits > MAX_DIGITS:
        raise ValueError(f"quantity {text[:20]!r}... has {digits} digits; desched reads at most {MAX_DIGITS}")
    mantissa = int(parts.num + parts.denom)
    if mantissa == 0:
        return 0
    if binary:
        nano = -(-((mantissa << exponent) * NANO) // _pow10(len(parts.denom)))
        return min(nano, _BINARY_CAP_NANO)
    shift = exponent + 9 - len(parts.denom)
    if shift > _MAX_EXPONENT:
        raise ValueError(f"quantity {text!r} is out of range")
    if shift >= 0:
        return mantissa * _pow10(shift)
    if -shift > len(parts.num) + len(parts.denom) + 1:
        return 1  # below one nano-unit: rounded up to it
    return -(-mantissa // _pow10(-shift))


def _parse_text(text: str) -> int:
    """The quantity ``text`` in nano-units (see the module docstring); ValueError when Go rejects it."""
    s = text.strip()
    if not s:
        raise ValueError("quantity is empty")
    if s == "0":
        return 0
    parts = _split(s, text)
    if parts is None:
        return 0
    exponent, binary = _exponent(parts.suffix, text)
    # Go's int64 fast path; outside it the number goes through inf.Dec, which needs at least one digit.
    num, denom = parts.num, parts.denom
    if binary:
        fast = not denom and 15 - len(num) - (exponent * 3) // 10 - 1 >= 0
    else:
        fast = 18 - len(num) - len(denom) >= 0 and exponent - len(denom) >= -9
    if not fast and not any(char in _DIGITS for char in s[: parts.number_end]):
        raise ValueError(f"quantity {text!r} has no digits")
    nano = _scaled(parts, exponent, binary, text)
    return -nano if parts.negative else nano


def nano_value(value: str | int | float) -> int:
    """The quantity in nano-units (exact, Go-rounded); ValueError when it does not parse."""
    try:
        return _cache[value]  # type: ignore[index]  # only str keys are ever stored
    except KeyError:
        pass
    except TypeError:
        raise ValueError(f"not a quantity: {value!r}") from None
    if type(value) is str:
        parsed = _parse_text(value)
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[value] = parsed
        return parsed
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        return _parse_text(repr(value))
    if isinstance(value, str):  # a str subclass
        return _parse_text(str(value))
    raise ValueError(f"not a quantity: {value!r}")


def parse_quantity(value: str | int | float) -> Fraction:
    """The quantity as an exact fraction (rounded away from zero to 10^-9); ValueError when it does not parse."""
    return Fraction(nano_value(value), NANO)


def _scale_up(nano: int, divisor: int) -> int:
    """nano / divisor with the magnitude rounded up (the ceiling for non-negative amounts)."""
    if nano >= 0:
        return -(-nano // divisor)
    return -((-nano + divisor - 1) // divisor)


def milli_value(value: str | int | float) -> int:
    """``Quantity.MilliValue()``: ceil(q * 1000) (magnitude rounded up below zero)."""
    return _scale_up(nano_value(value), 1_000_000)


def int_value(value: str | int | float) -> int:
    """``Quantity.Value()``: ceil(q) (magnitude rounded up below zero)."""
    return _scale_up(nano_value(value), NANO)


def nano_to_resource_value(name: str, nano: int) -> int:
    """A nano-unit amount of resource ``name`` in :func:`resource_value` units (rounded up)."""
    return _scale_up(nano, 1_000_000 if name == "cpu" else NANO)


def resource_value(name: str, value: str | int | float) -> int:
    """The comparison unit of resource ``name``: millicores for ``cpu``, ``Value()`` for everything else."""
    return nano_to_resource_value(name, nano_value(value))
