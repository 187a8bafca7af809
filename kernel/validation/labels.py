"""Label selectors the way apimachinery checks them: ``labels.Parse`` and ``metav1.LabelSelectorAsSelector``.

Written from the apimachinery code vendored by each descheduler release. Its error texts changed twice:

* up to v0.33 a rejected value list is printed with ``%#v`` (``[]string(nil)``), from v0.34 as JSON (``null``);
* up to v0.34 keys are checked by ``IsQualifiedName`` ("a qualified name", "must be no more than 63 characters") and
  the selector parser consumes the second comma of ``,,`` inside a value list; from v0.35 ``content.IsLabelKey``
  ("a valid label key", "... 63 bytes") does the checking and ``,,`` is read as an empty value.

Every function takes the descheduler release as ``target`` (default: the newest) to pick the matching dialect.
Lengths are counted in UTF-8 bytes, as Go does.
"""

from __future__ import annotations

import re
from typing import Any

from desched.patterns import lazy
from desched.validation.core import Path, go_key, items, mapping, path_key, string
from desched.validation.gofmt import go_json_strings, go_quote, go_sharp_strings
from desched.versions import NEWEST as _NEWEST

__all__ = [
    "is_dns1123_subdomain",
    "is_label_key",
    "is_label_value",
    "label_selector_error",
    "label_selector_problem",
    "parse_label_selector_string",
]


_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = lazy("^" + _LABEL_KEY_FMT + "$")
_LABEL_KEY_MAX = 63

_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_RE = lazy("^" + _LABEL_VALUE_FMT + "$")
_LABEL_VALUE_MAX = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_RE = lazy("^" + _DNS1123_SUBDOMAIN_FMT + "$")
_DNS1123_SUBDOMAIN_MAX = 253

_INT64 = lazy(r"^[+-]?[0-9]+$")


def _fullmatch(pattern: re.Pattern[str], value: str) -> bool:
    # Go's RE2 `$` matches only at the very end; Python's `$` also before a final newline.
    return pattern.match(value) is not None and not value.endswith("\n")


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def _max_len_error(length: int, target: int) -> str:
    unit = "bytes" if target >= 35 else "characters"
    return f"must be no more than {length} {unit}"


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    if not examples:
        return message + " (regex used for validation is '" + fmt + "')"
    text = message + " (e.g. "
    for index, example in enumerate(examples):
        if index > 0:
            text += " or "
        text += "'" + example + "', "
    return text + "regex used for validation is '" + fmt + "')"


def is_dns1123_subdomain(value: str, target: int = _NEWEST) -> list[str]:
    """``validation.IsDNS1123Subdomain``: the list of problems, empty when valid."""
    errors = []
    if _byte_len(value) > _DNS1123_SUBDOMAIN_MAX:
        errors.append(_max_len_error(_DNS1123_SUBDOMAIN_MAX, target))
    if not _fullmatch(_DNS1123_SUBDOMAIN_RE(), value):
        errors.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def is_label_key(value: str, target: int = _NEWEST) -> list[str]:
    """``validation.IsQualifiedName`` / ``content.IsLabelKey``: ``[prefix/]name`` with a DNS-1123 subdomain prefix."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + message for message in is_dns1123_subdomain(prefix, target))
    else:
        noun = "a valid label key " if target >= 35 else "a qualified name "
        errors.append(
            noun
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )
        return errors
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > _LABEL_KEY_MAX:
        errors.append("name part " + _max_len_error(_LABEL_KEY_MAX, target))
    if not _fullmatch(_LABEL_KEY_RE(), name):
        errors.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errors


def is_label_value(value: str, target: int = _NEWEST) -> list[str]:
    """``validation.IsValidLabelValue``: empty, or at most 63 bytes of ``[A-Za-z0-9_.-]`` with alphanumeric ends."""
    errors = []
    if _byte_len(value) > _LABEL_VALUE_MAX:
        errors.append(_max_len_error(_LABEL_VALUE_MAX, target))
    if not _fullmatch(_LABEL_VALUE_RE(), value):
        errors.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


# --- field.Error rendering ---------------------------------------------------------------------------------------


def _invalid(field: str, bad_value: str, detail: str) -> str:
    """``field.Invalid(path, <string>, detail).Error()``."""
    return f"{field}: Invalid value: {go_quote(bad_value)}: {detail}"


def _invalid_values(field: str, values: list[str] | None, detail: str, target: int) -> str:
    """``field.Invalid(path, <[]string>, detail).Error()``: ``%#v`` up to v0.33, JSON from v0.34."""
    rendered = go_json_strings(values) if target >= 34 else go_sharp_strings(values)
    return f"{field}: Invalid value: {rendered}: {detail}"


def _validate_label_key(key: str, field: str, target: int) -> str | None:
    errors = is_label_key(key, target)
    return _invalid(field, key, "; ".join(errors)) if errors else None


def _validate_label_value(key: str, value: str, field: str, target: int) -> str | None:
    errors = is_label_value(value, target)
    return _invalid(f"{field}[{key}]", value, "; ".join(errors)) if errors else None


def _parse_int64(text: str) -> bool:
    return bool(_fullmatch(_INT64(), text)) and -(2**63) <= int(text) <= 2**63 - 1


def _new_requirement(key: str, operator: str, values: list[str] | None, target: int) -> list[str]:
    """``labels.NewRequirement`` with no field path: its error list, de-duplicated like ``ErrorList.ToAggregate``."""
    errors: list[str] = []
    key_error = _validate_label_key(key, "key", target)
    if key_error:
        errors.append(key_error)
    vals = values or []
    if operator in ("in", "notin"):
        if not vals:
            errors.append(
                _invalid_values("values", values, "for 'in', 'notin' operators, values set can't be empty", target)
            )
    elif operator in ("=", "==", "!="):
        if len(vals) != 1:
            errors.append(
                _invalid_values("values", values, "exact-match compatibility requires one single value", target)
            )
    elif operator in ("exists", "!"):
        if vals:
            errors.append(
                _invalid_values("values", values, "values set must be empty for exists and does not exist", target)
            )
    elif operator in ("gt", "lt"):
        if len(vals) != 1:
            errors.append(
                _invalid_values("values", values, "for 'Gt', 'Lt' operators, exactly one value is required", target)
            )
        for index, value in enumerate(vals):
            if not _parse_int64(value):
                errors.append(
                    _invalid(f"values[{index}]", value, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    for index, value in enumerate(vals):
        value_error = _validate_label_value(key, value, f"values[{index}]", target)
        if value_error:
            errors.append(value_error)
    unique: list[str] = []
    for error in errors:
        if error not in unique:
            unique.append(error)
    return unique


def _render_error_list(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


# --- metav1.LabelSelectorAsSelector ------------------------------------------------------------------------------

_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_problem(selector: Any, target: int = _NEWEST) -> tuple[str, Path] | None:
    """The first error ``LabelSelectorAsSelector`` returns for ``selector``, with the path it concerns.

    ``selector`` is the decoded YAML mapping (``matchLabels``, ``matchExpressions``); anything else, and fields of the
    wrong type, count as absent. ``matchLabels`` are checked in document order (Go's map order is random).
    """
    data = mapping(selector)
    if data is None:
        return None
    labels_map = mapping(data.get("matchLabels")) or {}
    expressions = items(data.get("matchExpressions")) or []
    for raw_key, raw_value in labels_map.items():
        if raw_value is not None and not isinstance(raw_value, str):
            continue  # a decode error, reported by another rule
        key = go_key(raw_key)
        errors = _new_requirement(key, "=", [string(raw_value)], target)
        if errors:
            return _render_error_list(errors), ("matchLabels", path_key(raw_key))
    for index, expression in enumerate(expressions):
        if expression is None:
            expression = {}
        if not isinstance(expression, dict):
            continue
        operator = string(expression.get("operator"))
        if operator not in _OPERATORS:
            message = f"{go_quote(operator)} is not a valid label selector operator"
            return message, ("matchExpressions", index, "operator")
        raw_values = items(expression.get("values"))
        values = [value for value in raw_values if isinstance(value, str)] if raw_values else None
        errors = _new_requirement(string(expression.get("key")), _OPERATORS[operator], values or None, target)
        if errors:
            return _render_error_list(errors), ("matchExpressions", index)
    return None


def label_selector_error(selector: Any, target: int = _NEWEST) -> str | None:
    """``metav1.LabelSelectorAsSelector``: ``None`` when ``selector`` converts, else apimachinery's error text.

    >>> label_selector_error({"matchExpressions": [{"key": "app", "operator": "Exists"}]}) is None
    True
    """
    problem = label_selector_problem(selector, target)
    return problem[0] if problem else None


# --- labels.Parse ------------------------------------------------------------------------------------------------

_ERROR, _EOS, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _ID, _IN, _LT, _NOT_EQ, _NOT_IN, _OPEN = range(14)
_STRING_TO_TOKEN = {
    ")": _CLOSE,
    ",": _COMMA,
    "!": _NOT,
    "==": _DOUBLE_EQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NOT_EQ,
    "notin": _NOT_IN,
    "(": _OPEN,
}
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_END = "\0"


class _SyntaxError(Exception):
    """A selector string does not parse; ``args[0]`` is upstream's message."""


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self) -> str:
        if self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            return char
        return _END

    def unread(self) -> None:
        self.pos -= 1

    def scan_id_or_keyword(self) -> tuple[int, str]:
        buffer = []
        while True:
            char = self.read()
            if char == _END:
                break
            if char in _SPECIAL or char in _WHITESPACE:
                self.unread()
                break
            buffer.append(char)
        literal = "".join(buffer)
        return _STRING_TO_TOKEN.get(literal, _ID), literal

    def scan_special_symbol(self) -> tuple[int, str]:
        last: tuple[int, str] = (_ERROR, "")
        buffer = ""
        while True:
            char = self.read()
            if char == _END:
                break
            if char in _SPECIAL:
                buffer += char
                if buffer in _STRING_TO_TOKEN:
                    last = (_STRING_TO_TOKEN[buffer], buffer)
                elif last[0] != _ERROR:
                    self.unread()
                    break
            else:
                self.unread()
                break
        if last[0] == _ERROR:
            return _ERROR, f"error expected: keyword found '{buffer}'"
        return last

    def lex(self) -> tuple[int, str]:
        char = self.read()
        while char in _WHITESPACE:
            char = self.read()
        if char == _END:
            return _EOS, ""
        self.unread()
        if char in _SPECIAL:
            return self.scan_special_symbol()
        return self.scan_id_or_keyword()


class _Parser:
    """The recursive-descent parser of ``labels.Parse`` (no field path, so key errors read ``<nil>: ...``)."""

    def __init__(self, text: str, target: int) -> None:
        self.target = target
        self.items: list[tuple[int, str]] = []
        self.requirements: list[tuple[str, str, list[str]]] = []
        lexer = _Lexer(text)
        while True:
            token, literal = lexer.lex()
            self.items.append((token, literal))
            if token == _EOS:
                break
        self.position = 0

    def lookahead(self, values_context: bool) -> tuple[int, str]:
        token, literal = self.items[self.position]
        if values_context and token in (_IN, _NOT_IN):
            token = _ID
        return token, literal

    def consume(self, values_context: bool) -> tuple[int, str]:
        self.position += 1
        token, literal = self.items[self.position - 1]
        if values_context and token in (_IN, _NOT_IN):
            token = _ID
        return token, literal

    def parse(self) -> None:
        while True:
            token, literal = self.lookahead(True)
            if token in (_ID, _NOT):
                try:
                    self.parse_requirement()
                except _SyntaxError as error:
                    raise _SyntaxError(f"unable to parse requirement: {error.args[0]}") from None
                token, literal = self.consume(True)
                if token == _EOS:
                    return
                if token == _COMMA:
                    next_token, next_literal = self.lookahead(True)
                    if next_token not in (_ID, _NOT):
                        raise _SyntaxError(f"found '{next_literal}', expected: identifier after ','")
                else:
                    raise _SyntaxError(f"found '{literal}', expected: ',' or 'end of string'")
            elif token == _EOS:
                return
            else:
                raise _SyntaxError(f"found '{literal}', expected: !, identifier, or 'end of string'")

    def parse_requirement(self) -> None:
        key, operator = self.parse_key_and_infer_operator()
        if operator in ("exists", "!"):
            values: list[str] = []
        else:
            operator = self.parse_operator()
            parsed = self.parse_values() if operator in ("in", "notin") else self.parse_exact_value()
            values = sorted(parsed)
        errors = _new_requirement(key, operator, values, self.target)
        if errors:
            raise _SyntaxError(_render_error_list(errors))
        self.requirements.append((key, operator, values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        token, literal = self.consume(True)
        if token == _NOT:
            operator = "!"
            token, literal = self.consume(True)
        if token != _ID:
            raise _SyntaxError(f"found '{literal}', expected: identifier")
        key_error = _validate_label_key(literal, "<nil>", self.target)
        if key_error:
            raise _SyntaxError(key_error)
        next_token, _ = self.lookahead(True)
        if next_token in (_EOS, _COMMA) and operator != "!":
            operator = "exists"
        return literal, operator

    def parse_operator(self) -> str:
        token, literal = self.consume(False)
        operators = {_IN: "in", _EQ: "=", _DOUBLE_EQ: "==", _GT: "gt", _LT: "lt", _NOT_IN: "notin", _NOT_EQ: "!="}
        if token not in operators:
            raise _SyntaxError(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        return operators[token]

    def parse_values(self) -> set[str]:
        token, literal = self.consume(True)
        if token != _OPEN:
            raise _SyntaxError(f"found '{literal}' expected: '('")
        token, literal = self.lookahead(True)
        if token in (_ID, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume(True)[0] != _CLOSE:
                raise _SyntaxError(f"found '{literal}', expected: ')'")
            return values
        if token == _CLOSE:
            self.consume(True)
            return {""}
        raise _SyntaxError(f"found '{literal}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            token, literal = self.consume(True)
            if token == _ID:
                values.add(literal)
                next_token, next_literal = self.lookahead(True)
                if next_token == _COMMA:
                    continue
                if next_token == _CLOSE:
                    return values
                raise _SyntaxError(f"found '{next_literal}', expected: ',' or ')'")
            if token == _COMMA:
                if not values:
                    values.add("")
                next_token, _ = self.lookahead(True)
                if next_token == _CLOSE:
                    values.add("")
                    return values
                if next_token == _COMMA:
                    if self.target <= 34:
                        self.consume(True)
                    values.add("")
            else:
                raise _SyntaxError(f"found '{literal}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        token, _ = self.lookahead(True)
        if token in (_EOS, _COMMA):
            return {""}
        token, literal = self.consume(True)
        if token == _ID:
            return {literal}
        raise _SyntaxError(f"found '{literal}', expected: identifier")


def parse_label_selector_string(text: str, target: int = _NEWEST) -> str | None:
    """``labels.Parse(text)``: ``None`` when the selector string is valid, else upstream's error text.

    >>> parse_label_selector_string("env in (a,b),!legacy") is None
    True
    >>> parse_label_selector_string("a=b=c")
    "found '=', expected: ',' or 'end of string'"
    """
    try:
        _Parser(text, target).parse()
    except _SyntaxError as error:
        return str(error.args[0])
    return None


def label_selector_requirements(text: str, target: int = _NEWEST) -> list[tuple[str, str, list[str]]]:
    """The requirements ``labels.Parse(text)`` builds, as ``(key, operator, values)`` with ``operator`` one of
    ``=``, ``==``, ``!=``, ``in``, ``notin``, ``exists``, ``!``, ``gt``, ``lt``; ValueError with upstream's message
    when the string does not parse."""
    parser = _Parser(text, target)
    try:
        parser.parse()
    except _SyntaxError as error:
        raise ValueError(str(error.args[0])) from None
    return parser.requirements
