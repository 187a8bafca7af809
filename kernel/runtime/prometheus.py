"""Prometheus text exposition (format 0.0.4) for the executor's and the webhook's metrics: counters and histograms
with labels, thread-safe, no dependency. (The linter itself exports no metrics.)

Contract: every sample value and bucket bound is written exactly (:func:`number`): a value parsed back is the value
counted. Counters and histogram counts stay Python integers, so they are exact beyond 2**53 too.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

_EXACT_FLOAT_INTEGERS = 2**53  # below this every integer is a float, and a float with no fraction is that integer


def number(value: float) -> str:
    """``value`` as the exposition format spells it, exactly: an ``int`` (and a float with no fraction below 2**53)
    as its digits, another float as its shortest round-trip form (``repr``), and ``+Inf``, ``-Inf``, ``NaN``."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < _EXACT_FLOAT_INTEGERS:
        return str(int(value))
    return repr(value)


def labels(names: Sequence[str], values: Sequence[str]) -> str:
    """``{name="value",...}`` with Prometheus escaping; empty for no labels."""

    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    pairs = ",".join(f'{name}="{escape(value)}"' for name, value in zip(names, values, strict=True))
    return "{" + pairs + "}" if pairs else ""


class Counter:
    """A counter family: ``inc(*label_values)``."""

    def __init__(self, name: str, help_text: str, label_names: Sequence[str]) -> None:
        self.name, self.help, self.label_names = name, help_text, tuple(label_names)
        self._values: dict[tuple[str, ...], float] = {}
        self._lock = threading.Lock()

    def inc(self, *values: str, amount: float = 1) -> None:
        with self._lock:
            self._values[values] = self._values.get(values, 0) + amount

    def render(self, name: str | None = None) -> list[str]:
        shown = name or self.name
        with self._lock:
            items = sorted(self._values.items())
        if not items and not self.label_names:
            items = [((), 0)]  # a counter without labels exists from the start
        return [f"# HELP {shown} {self.help}", f"# TYPE {shown} counter"] + [
            f"{shown}{labels(self.label_names, key)} {number(value)}" for key, value in items
        ]


class Histogram:
    """A histogram family: ``observe(value, *label_values)``."""

    def __init__(self, name: str, help_text: str, buckets: Sequence[float], label_names: Sequence[str] = ()) -> None:
        self.name, self.help, self.label_names = name, help_text, tuple(label_names)
        self.buckets = tuple(buckets)
        self._series: dict[tuple[str, ...], _Series] = {}
        self._lock = threading.Lock()

    def observe(self, value: float, *values: str) -> None:
        with self._lock:
            series = self._series.get(values)
            if series is None:
                series = self._series[values] = _Series(len(self.buckets))
            for index, bound in enumerate(self.buckets):
                if value <= bound:
                    series.buckets[index] += 1
            series.total += value
            series.count += 1

    def render(self, name: str | None = None) -> list[str]:
        shown = name or self.name
        lines = [f"# HELP {shown} {self.help}", f"# TYPE {shown} histogram"]
        with self._lock:
            series = sorted(((key, entry.copy()) for key, entry in self._series.items()), key=lambda item: item[0])
        if not series and not self.label_names:
            series = [((), _Series(len(self.buckets)))]
        for key, entry in series:
            names = (*self.label_names, "le")
            lines += [
                f"{shown}_bucket{labels(names, (*key, number(bound)))} {hits}"
                for bound, hits in zip(self.buckets, entry.buckets, strict=True)
            ]
            lines.append(f"{shown}_bucket{labels(names, (*key, '+Inf'))} {entry.count}")
            lines.append(f"{shown}_sum{labels(self.label_names, key)} {number(entry.total)}")
            lines.append(f"{shown}_count{labels(self.label_names, key)} {entry.count}")
        return lines


class _Series:
    """One histogram series: per-bucket counts, the sum and the count of observations."""

    def __init__(self, size: int) -> None:
        self.buckets = [0] * size
        self.total: float = 0
        self.count = 0

    def copy(self) -> _Series:
        copied = _Series(0)
        copied.buckets, copied.total, copied.count = list(self.buckets), self.total, self.count
        return copied
