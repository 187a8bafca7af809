"""GitHub Actions workflow commands: one annotation per active finding.

Contract: each active finding becomes one line ``::error file=F,line=L,col=C,title=RULE::MESSAGE`` (``::warning``
for warnings, ``::notice`` for info); the object, when known, is appended to the message as `` [OBJECT]``.
Escaping follows the Actions runner: in the message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D`` and
``%0A``; property values additionally escape ``:`` and ``,`` as ``%3A`` and ``%2C``. Stdin (``-``) has no file
property. Lone surrogates, which no output stream could encode, become ``?``. A clean report renders as the empty
string.
"""

from __future__ import annotations

from desched.linter.finding import Finding
from desched.linter.formatters import Report

__all__ = ["escape_data", "escape_property", "render"]

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
_DATA = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})
_PROPERTY = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"})


def render(report: Report) -> str:
    """Render the active findings of ``report`` as workflow commands, one per line."""
    return "".join(_command(finding) + "\n" for finding in report.active)


def escape_data(text: str) -> str:
    """Escape the message part of a workflow command."""
    return _encodable(text).translate(_DATA)


def escape_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``...) of a workflow command."""
    return _encodable(text).translate(_PROPERTY)


def _encodable(text: str) -> str:
    """``text`` with lone surrogates (from undecodable file names) replaced by ``?``, so it can be written."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _command(finding: Finding) -> str:
    properties = [] if finding.file == "-" else [("file", finding.file)]
    properties += [("line", str(finding.line)), ("col", str(finding.column)), ("title", finding.rule)]
    message = f"{finding.message} [{finding.object}]" if finding.object else finding.message
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS.get(finding.severity, 'warning')} {rendered}::{escape_data(message)}"
