"""A strict reader of the Prometheus text format 0.0.4 for tests (``prometheus_client`` is no dependency of ours).

It reads what a scraper reads: ``# HELP`` and ``# TYPE`` lines, and samples ``name{label="value",...} value``
with the format's escapes. A value must be spelled as Prometheus spells it (a Go float, ``+Inf``, ``-Inf``, ``NaN``);
anything else raises ``ValueError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_VALUE = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN"
_SAMPLE = re.compile(rf"({_NAME})(?:\{{(.*)\}})? ({_VALUE})")
_LABEL = re.compile(rf'({_NAME})="((?:[^"\\]|\\.)*)"(,|$)')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


@dataclass
class Sample:
    name: str
    labels: dict[str, str]
    value: float
    text: str  # the value as written


@dataclass
class Family:
    name: str
    type: str = "untyped"
    help: str = ""
    samples: list[Sample] = field(default_factory=list)


def parse(text: str) -> dict[str, Family]:
    """The families of an exposition, in the order they appear."""
    families: dict[str, Family] = {}
    for line in text.splitlines():
        if line.startswith("# "):
            keyword, name, rest = [*line[2:].split(" ", 2), ""][:3]
            family = families.setdefault(name, Family(name))
            if keyword == "HELP":
                family.help = _unescape(rest)
            elif keyword == "TYPE":
                family.type = rest
            continue
        match = _SAMPLE.fullmatch(line)
        if match is None:
            raise ValueError(f"not a sample line: {line!r}")
        name, labels, value = match.groups()
        owner = _family_of(name, families)
        owner.samples.append(Sample(name, _labels(labels or ""), float(value), value))
    return families


def _family_of(sample: str, families: dict[str, Family]) -> Family:
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample.removesuffix(suffix)
        if base != sample and base in families and families[base].type == "histogram":
            return families[base]
    return families.setdefault(sample, Family(sample))


def _labels(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None:
            raise ValueError(f"bad labels: {text!r}")
        found[match[1]] = _unescape(match[2])
        position = match.end()
    return found


def _unescape(text: str) -> str:
    return re.sub(r"\\[\\\"n]", lambda escape: _ESCAPES[escape[0]], text)
