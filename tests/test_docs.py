"""The documentation the code cites is in the repository: every ``docs/<file>.md#<anchor>`` points at a heading, and
nothing cites numbered sections of documents outside it (a section sign and a number)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")
SECTION_SIGN = "\u00a7"


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    paths = [ROOT / name for name in listed.split()]
    return [
        path
        for path in paths
        if path.suffix in (".py", ".md") and "golden" not in path.parts and path.is_file() and path != Path(__file__)
    ]


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lowercase, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    return {github_anchor(line.lstrip("#")) for line in markdown.splitlines() if re.match(r"#{1,6} ", line)}


def broken_citations(files: list[Path]) -> list[str]:
    """``FILE: docs/X.md#anchor`` for every citation whose document or heading does not exist."""
    known: dict[str, set[str] | None] = {}
    broken: list[str] = []
    for path in files:
        for document, anchor in CITATION.findall(path.read_text(encoding="utf-8")):
            if document == "rules.md":
                continue  # generated; its rule anchors are checked by tests/linter/test_rules.py
            if document not in known:
                target = ROOT / "docs" / document
                known[document] = anchors(target.read_text(encoding="utf-8")) if target.is_file() else None
            headings = known[document]
            if headings is None or (anchor and anchor not in headings):
                broken.append(f"{path.name}: docs/{document}{'#' + anchor if anchor else ''}")
    return broken


def test_no_citation_of_documents_outside_the_repository():
    citing = [str(path.relative_to(ROOT)) for path in _tracked() if SECTION_SIGN in path.read_text(encoding="utf-8")]
    assert citing == []


def test_every_cited_section_exists():
    files = _tracked()
    assert sum(len(CITATION.findall(path.read_text(encoding="utf-8"))) for path in files) > 100
    assert broken_citations(files) == []


def test_a_broken_anchor_is_found(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("# see docs/policy-api.md#42-defaultevictor and docs/policy-api.md#99-nothing, docs/nope.md\n")
    assert [line.split(": ", 1)[1] for line in broken_citations([bad])] == [
        "docs/policy-api.md#99-nothing",
        "docs/nope.md",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("4.2 DefaultEvictor", "42-defaultevictor"),
        ("3.2 `Filter`", "32-filter"),
        ("0.1 Identity and outputs", "01-identity-and-outputs"),
    ],
)
def test_anchors_follow_github(heading: str, anchor: str):
    assert github_anchor(heading) == anchor
