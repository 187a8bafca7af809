"""Inline suppression comments.

``# desched: disable=DS302,DS305 reason`` at the end of a line suppresses those rules on that line; on a line of
its own it suppresses them on the next line that is not blank or a comment. ``# desched: disable-file=DS206
reason`` suppresses them in the whole file. ``all`` stands for every rule; rule NAMEs work as well as IDs.
Suppressed findings are kept (SARIF shows them as suppressed) with the reason as justification.
"""

from __future__ import annotations

from collections.abc import Callable

from desched.patterns import lazy

__all__ = ["Suppressions", "parse"]

_DIRECTIVE = lazy(r"(?:^|\s)#\s*desched:\s*(disable|disable-file)=([\w,\-]+)[ \t]*([^\n]*)")


class Suppressions:
    """Which rules are silenced where in one file; ``reason(rule, line)`` answers ``None`` when active."""

    def __init__(self) -> None:
        self.by_line: dict[int, dict[str, str]] = {}
        self.whole_file: dict[str, str] = {}

    def reason(self, rule: str, line: int) -> str | None:
        for table in (self.by_line.get(line, {}), self.whole_file):
            if rule in table:
                return table[rule]
            if "ALL" in table:
                return table["ALL"]
        return None


def parse(text: str, resolve: Callable[[str], str]) -> Suppressions:
    """Collect directives of ``text``; unknown rule names are kept as written (they match nothing)."""
    result = Suppressions()
    if "desched:" not in text:
        return result
    lines = text.splitlines()
    pending: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        match = _DIRECTIVE().search(line)
        if match:
            kind, names, reason = match.groups()
            reason = reason.strip() or "suppressed inline"
            table: dict[str, str] = {}
            for name in filter(None, names.split(",")):
                try:
                    table["ALL" if name.lower() == "all" else resolve(name)] = reason
                except KeyError:
                    table[name] = reason
            if kind == "disable-file":
                result.whole_file.update(table)
            elif stripped.startswith("#"):
                pending.update(table)
            else:
                result.by_line.setdefault(number, {}).update(table)
            continue
        if stripped and not stripped.startswith("#") and pending:
            result.by_line.setdefault(number, {}).update(pending)
            pending = {}
    return result
