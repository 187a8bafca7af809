"""Reading the Dockerfile (and pip requirement files, which share its comment and continuation syntax)."""

from __future__ import annotations

import re
import shlex

FROM = re.compile(r"^(\s*FROM\s+(?:--\S+\s+)*)(\S+)", re.IGNORECASE | re.MULTILINE)


def logical_lines(text: str) -> list[str]:
    """``text``'s lines with backslash continuations joined and comment lines left out (Dockerfile and pip syntax)."""
    lines: list[str] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined = (pending + stripped).strip()
        pending = ""
        if joined:
            lines.append(joined)
    return lines


def instructions(text: str, instruction: str) -> list[list[str]]:
    """The arguments of every instruction named ``instruction`` (upper case) in ``text``, split as a shell would."""
    found: list[list[str]] = []
    for line in logical_lines(text):
        name, _, rest = line.partition(" ")
        if name.upper() == instruction:
            found.append(shlex.split(rest))
    return found


def copied_sources(text: str) -> list[str]:
    """The build-context paths the Dockerfile's COPY lines take (``COPY --from`` takes a stage's, not the context's)."""
    sources: list[str] = []
    for words in instructions(text, "COPY"):
        if not any(word.startswith("--from") for word in words):
            sources += [word for word in words[:-1] if not word.startswith("--")]
    return sources


def with_bases(text: str, bases: list[str]) -> str:
    """``text`` with the image of its n-th FROM line replaced by ``bases[n]``; everything else byte for byte."""
    found = FROM.findall(text)
    if len(found) != len(bases):
        raise ValueError(f"the Dockerfile has {len(found)} FROM lines, {len(bases)} bases were given")
    replacements = iter(bases)
    return FROM.sub(lambda match: match.group(1) + next(replacements), text)
