"""The schema test corpus and the two verdicts compared on it: the JSON Schema's and the structural checker's.

Every ``corpus/*.yaml`` file is a policy document with a comment header:

* ``# expect: valid``, ``# expect: invalid``, ``# expect: valid from v0.NN``, ``# expect: valid until v0.NN`` or
  ``# expect: valid from v0.NN until v0.MM``: the releases whose upstream decoder takes every key and value of the
  document (structurally valid: no unknown key, wrong type or key of another release);
* optionally ``# xfail expect[ v0.AA[-v0.BB]]: reason`` (the checker's verdict is known to differ from upstream) and
  ``# xfail agree[ v0.AA[-v0.BB]]: reason`` (the schema's verdict is known to differ from the checker's).

A ``descheduler/v1alpha1`` document is checked only for the releases that read v1alpha1 (up to v0.30).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from desched import versions
from desched.policy.schema import policy_schema
from desched.policy.structure import check_structure

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
SCHEMAS = HERE.parents[2] / "schemas"
TARGETS = tuple(range(versions.OLDEST, versions.NEWEST + 1))
REGENERATE = "python -m desched.policy.schema --out schemas"

_EXPECT = re.compile(r"^# expect: (valid|invalid)(?: from v0\.(\d+))?(?: until v0\.(\d+))?\s*$")
_XFAIL = re.compile(r"^# xfail (expect|agree)(?: v0\.(\d+)(?:-v0\.(\d+))?)?: (.+)$")


@dataclass(frozen=True)
class Case:
    name: str
    data: Any
    api: str
    valid: frozenset[int]
    xfails: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)

    @property
    def targets(self) -> tuple[int, ...]:
        if self.api == "v1alpha1":
            return tuple(t for t in TARGETS if t < versions.V1ALPHA1_REMOVED)
        return TARGETS

    def known_gap(self, test: str, target: int) -> str | None:
        for low, high, reason in self.xfails.get(test, []):
            if low <= target <= high:
                return reason
        return None


def _parse(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    valid: frozenset[int] | None = None
    xfails: dict[str, list[tuple[int, int, str]]] = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if match := _EXPECT.match(line):
            verdict, since, until = match.groups()
            low = int(since) if since else versions.OLDEST
            high = int(until) if until else versions.NEWEST
            valid = frozenset(range(low, high + 1)) if verdict == "valid" else frozenset()
        elif match := _XFAIL.match(line):
            test, since, until, reason = match.groups()
            low = int(since) if since else versions.OLDEST
            high = int(until) if until else (low if since else versions.NEWEST)
            xfails.setdefault(test, []).append((low, high, reason))
        elif line.startswith(("# expect", "# xfail")):
            raise ValueError(f"{path.name}: cannot read header line {line!r}")
    if valid is None:
        raise ValueError(f"{path.name}: no '# expect:' header")
    data = yaml.safe_load(text)
    api = "v1alpha1" if isinstance(data, dict) and data.get("apiVersion") == "descheduler/v1alpha1" else "v1alpha2"
    return Case(path.stem, data, api, valid, xfails)


@cache
def corpus() -> tuple[Case, ...]:
    return tuple(_parse(path) for path in sorted(CORPUS.glob("*.yaml")))


def params(test: str) -> list[Any]:
    """One ``pytest.param(case, target)`` per corpus case and release, strict-xfail where the case says so."""
    out = []
    for case in corpus():
        for target in case.targets:
            reason = case.known_gap(test, target)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(case, target, id=f"{case.name}@v0.{target}", marks=marks))
    return out


@cache
def validator(target: int, api: str = "v1alpha2", semantic: bool = False) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(policy_schema(target, api, semantic=semantic))


def schema_errors(data: Any, target: int, api: str = "v1alpha2", semantic: bool = False) -> list[str]:
    return [
        f"{'/'.join(str(part) for part in error.absolute_path) or '(root)'}: {error.message}"
        for error in validator(target, api, semantic).iter_errors(data)
    ]


def checker_problems(data: Any, target: int, api: str = "v1alpha2") -> list[str]:
    return [
        f"{problem.code} {'/'.join(str(part) for part in problem.path)}: {problem.message}"
        for problem in check_structure(data, target, v1alpha1=api == "v1alpha1")
    ]
