"""Go templates (Helm ``*.yaml.tpl``, helmfile ``*.yaml.gotmpl``) read as YAML: every ``{{ ... }}`` action
neutralised, every other character where it was.

Contract: :func:`neutralize` returns text of the same length, with the same line breaks at the same offsets and every
character outside an action unchanged, so that a position in the neutralised text is the same position in the
template. Actions are found as Go's template parser finds them: trim markers (``{{-``, ``-}}``), comments
(``{{/* */}}``), strings (``"..."``, raw strings in back quotes, runes ``'.'``) that may hold ``}}``, and actions
over several lines.

* A line whose text outside actions is only whitespace, perhaps followed by a YAML comment, becomes blank there:
  control actions (``if``, ``range``, ``else``, ``end``, ``define``...), comments and the blocks ``include`` or
  ``toYaml`` insert render to something unknown, and leaving them out keeps the YAML around them valid.
* Any other action becomes a placeholder of its width: its own text with ``{{``/``}}`` and every character that
  could mean something to YAML written as ``_`` (``image: {{ .Values.tag }}`` reads ``image: __ .Values.tag __``).
  A placeholder always starts with ``_``, so it is a plain string, never a number, boolean, indicator or comment.
  Over several lines, only the part on the action's first line is a placeholder; the rest is blank.

:meth:`Neutralized.covers` says whether a position lies on a placeholder: a value known only once the template is
rendered, about which findings would be misleading. Raises :class:`TemplateError` for an action, a string or a
comment that is never closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from desched.errors import InputError

__all__ = ["Neutralized", "TemplateError", "neutralize"]

# Line breaks as libyaml counts them, so that line numbers from the loader index the same lines.
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_OPEN = "{{"
_TOKEN = re.compile(r"\}\}|[\"'`]|/\*")  # what ends an action, or opens something inside it that may hold "}}"
_QUOTED = re.compile(r"\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*'")  # Go's interpreted strings and runes
_UNSAFE = re.compile(r"[^\w./ -]")  # written as "_" in a placeholder
_BLANK_REST = re.compile(r"[ \t]*(?:#.*)?")  # what else a line that becomes blank may hold


class TemplateError(InputError):
    """An action, or a string or comment inside one, is never closed; ``line``/``column`` say where it opens."""


class Neutralized:
    """A template's ``text`` with its actions neutralised (:func:`neutralize`), and where the placeholders are."""

    __slots__ = ("_spans", "text")

    def __init__(self, text: str, spans: dict[int, list[tuple[int, int]]]) -> None:
        self.text = text
        self._spans = spans  # line -> [(first column, column after)] of each placeholder, 1-based

    def covers(self, line: int, column: int) -> bool:
        """True when 1-based ``line`` and ``column`` lie on a placeholder."""
        return any(start <= column < end for start, end in self._spans.get(line, ()))


def neutralize(text: str) -> Neutralized:
    """``text`` with every template action neutralised (see the module contract); raises :class:`TemplateError`."""
    actions = list(_actions(text))
    if not actions:
        return Neutralized(text, {})
    out: list[str] = []
    spans: dict[int, list[tuple[int, int]]] = {}
    index = 0  # the first action that may reach the current line
    start, number = 0, 1
    for line_break in (*_BREAK.finditer(text), None):
        end = len(text) if line_break is None else line_break.start()
        while index < len(actions) and actions[index][1] <= start:
            index += 1
        placed: list[tuple[int, int]] = []
        out.append(_line(text, start, end, actions, index, placed))
        if placed:
            spans[number] = placed
        if line_break is None:
            break
        out.append(line_break.group())
        start, number = line_break.end(), number + 1
    return Neutralized("".join(out), spans)


def _line(
    text: str, start: int, end: int, actions: list[tuple[int, int]], index: int, spans: list[tuple[int, int]]
) -> str:
    """Line ``text[start:end]`` neutralised (``actions[index]`` is the first that may reach it); the placeholders
    written are added to ``spans``."""
    pieces: list[tuple[int, int, bool]] = []  # (start, end, first line of its action) of each action on the line
    gaps: list[str] = []  # the text before each piece, then after the last
    cursor = start
    while index < len(actions) and actions[index][0] < end:
        first, after = actions[index]
        pieces.append((max(first, start), min(after, end), first >= start))
        gaps.append(text[cursor : pieces[-1][0]])
        cursor = pieces[-1][1]
        index += 1
    gaps.append(text[cursor:end])
    if not pieces:
        return gaps[0]
    blank = _BLANK_REST.fullmatch("".join(gaps)) is not None
    line = [gaps[0]]
    for (first, after, opens), gap in zip(pieces, gaps[1:], strict=True):
        if blank or not opens:
            line.append(" " * (after - first))
        else:
            line.append(_UNSAFE.sub("_", text[first:after]))
            spans.append((first - start + 1, after - start + 1))
        line.append(gap)
    return "".join(line)


def _actions(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) offsets of every action, in order."""
    position = text.find(_OPEN)
    while position >= 0:
        end = _close(text, position)
        yield position, end
        position = text.find(_OPEN, end)


def _close(text: str, start: int) -> int:
    """The offset after the ``}}`` closing the action that opens at ``start``, stepping over strings and comments."""
    index = start + len(_OPEN)
    while (token := _TOKEN.search(text, index)) is not None:
        found = token.group()
        if found == "}}":
            return token.end()
        if found == "/*":
            index = _after(text, "*/", token.end(), token.start(), "comment")
        elif found == "`":
            index = _after(text, "`", token.end(), token.start(), "raw string")
        else:
            quoted = _QUOTED.match(text, token.start())
            if quoted is None:
                raise TemplateError("string in a template action is never closed", *_position(text, token.start()))
            index = quoted.end()
    raise TemplateError("template action is never closed (no }})", *_position(text, start))


def _after(text: str, closing: str, index: int, opening: int, what: str) -> int:
    found = text.find(closing, index)
    if found < 0:
        raise TemplateError(f"{what} in a template action is never closed", *_position(text, opening))
    return found + len(closing)


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset``, lines counted as libyaml counts them."""
    line, start = 1, 0
    for line_break in _BREAK.finditer(text, 0, offset):
        line, start = line + 1, line_break.end()
    return line, offset - start + 1
