"""DS210: the same key twice in one mapping of a policy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.linter.rules._base import Context, DocumentKind, Hit, Path
from desched.reading.yamlsrc import YMap, YSeq

ID = "DS210"
NAME = "duplicate-key"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.KUBEDESCHEDULER, DocumentKind.CONVERTED, DocumentKind.RENDERED})
SUMMARY = "Duplicate key in a mapping"
RATIONALE = (
    "YAML forbids duplicate keys, but lenient parsers keep the last value: upstream's non-strict decoder silently "
    "drops the first occurrence, and inside plugin args the strict decoder fails at start-up. Either way one of "
    "the two values the author wrote is lost."
)
REMEDIATION = "Keep one occurrence of the key, merging what both meant."
EXAMPLES = {
    "pass": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"],
    "fail": ["apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\nprofiles: []\n"],
}


def _walk(node: Any, path: Path, budget: list[int]) -> Iterator[Hit]:
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(node, YMap):
        for key, _ in node.duplicates:
            yield Hit(f'key "{key}" appears more than once; only the last value is kept', (*path, key), key=True)
        for key, value in node.items():
            yield from _walk(value, (*path, key), budget)
    elif isinstance(node, YSeq):
        for index, value in enumerate(node):
            yield from _walk(value, (*path, index), budget)


def check(ctx: Context) -> Iterator[Hit]:
    if getattr(ctx.policy, "nested_duplicates", -1) == 0:
        return  # the composer counted none in this document
    yield from _walk(ctx.policy, (), [100_000])
