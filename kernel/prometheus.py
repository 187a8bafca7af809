"""Prometheus text exposition (format 0.0.4) for the executor's and the webhook's metrics: counters and histograms
with labels, thread-safe, no dependency. (The linter itself exports no metrics.)"""

from __future__ import annotations

import threading
from collections.abc import Sequence


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
            f"{shown}{labels(self.label_names, key)} {value:g}" for key, value in items
        ]


class Histogram:
    """A histogram family: ``observe(value, *label_values)``."""

    def __init__(self, name: str, help_text: str, buckets: Sequence[float], label_names: Sequence[str] = ()) -> None:
        self.name, self.help, self.label_names = name, help_text, tuple(label_names)
        self.buckets = tuple(buckets)
        self._series: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}
        self._lock = threading.Lock()

    def observe(self, value: float, *values: str) -> None:
        with self._lock:
            counts, total = self._series.setdefault(values, ([0] * len(self.buckets), [0.0, 0.0]))
            for index, bound in enumerate(self.buckets):
                if value <= bound:
                    counts[index] += 1
            total[0] += value
            total[1] += 1

    def render(self, name: str | None = None) -> list[str]:
        shown = name or self.name
        lines = [f"# HELP {shown} {self.help}", f"# TYPE {shown} histogram"]
        with self._lock:
            series = sorted((key, (list(counts), list(total))) for key, (counts, total) in self._series.items())
        if not series and not self.label_names:
            series = [((), ([0] * len(self.buckets), [0.0, 0.0]))]
        for key, (counts, (total, count)) in series:
            names = (*self.label_names, "le")
            lines += [
                f"{shown}_bucket{labels(names, (*key, f'{bound:g}'))} {hits}"
                for bound, hits in zip(self.buckets, counts, strict=True)
            ]
            lines.append(f"{shown}_bucket{labels(names, (*key, '+Inf'))} {count:g}")
            lines.append(f"{shown}_sum{labels(self.label_names, key)} {total:g}")
            lines.append(f"{shown}_count{labels(self.label_names, key)} {count:g}")
        return lines
