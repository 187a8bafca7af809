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


# -- the README and docs/ as a set of linked pages ---------------------------------------------------------------------

README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def relative_links(page: Path) -> list[tuple[Path, str]]:
    """``(target file, anchor)`` for each relative Markdown link of ``page`` outside code blocks (a link to an anchor
    of the page itself has ``page`` as its target; no anchor is ``''``)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    links = []
    for target in LINK.findall(text):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        links.append(((page.parent / path).resolve() if path else page, anchor))
    return links


def broken_links(pages: list[Path]) -> list[str]:
    """``PAGE: TARGET`` for every relative link of ``pages`` to a file that does not exist, or to a heading that a
    Markdown file does not have."""
    broken = []
    for page in pages:
        for target, anchor in relative_links(page):
            missing = not target.exists() or (
                anchor != "" and (target.suffix != ".md" or anchor not in anchors(target.read_text(encoding="utf-8")))
            )
            if missing:
                broken.append(f"{_shown(page)}: {_shown(target)}{'#' + anchor if anchor else ''}")
    return broken


def _shown(path: Path) -> Path:
    """``path`` relative to the checkout when it is inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def reachable_pages(start: Path) -> set[Path]:
    """The Markdown files reached from ``start`` by following relative links, ``start`` included."""
    seen, todo = {start}, [start]
    while todo:
        for target, _ in relative_links(todo.pop()):
            if target.suffix == ".md" and target.is_file() and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_every_docs_page_is_reachable_from_the_readme():
    unreached = {path.relative_to(ROOT) for path in _pages()} - {
        path.relative_to(ROOT) for path in reachable_pages(README)
    }
    assert unreached == set()


def test_every_relative_link_and_anchor_resolves():
    assert sum(len(relative_links(page)) for page in _pages()) > 50
    assert broken_links(_pages()) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other.md").write_text("# Other page\n\n## A `code` heading: here\n")
    page = (tmp_path / "page.md").resolve()
    page.write_text(
        "# Page\n[ok](sub/other.md#a-code-heading-here) [self](#page) [web](https://example.com/x.md#nope)\n"
        "[gone](sub/none.md) [bad anchor](sub/other.md#missing) [self bad](#nothing)\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    found = [line.split(": ", 1)[1] for line in broken_links([page])]
    assert found == [
        f"{page.parent}/sub/none.md",
        f"{page.parent}/sub/other.md#missing",
        f"{page}#nothing",
    ]
    assert reachable_pages(page) == {page, (tmp_path / "sub" / "other.md").resolve()}


def test_the_readme_is_a_front_page():
    """A few hundred lines: the long sections live in docs/."""
    assert 200 <= len(README.read_text(encoding="utf-8").splitlines()) <= 400


def test_the_quick_start_commands_are_unchanged_and_ci_runs_the_test_command():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Quick start\n") :].split("\n## ", 2)[1]
    blocks = re.findall(r"^```bash\n(.*?)\n```$", section, re.MULTILINE | re.DOTALL)
    assert blocks == ["pip install . && desched lint --exit-zero examples/", "./scripts/test"]
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and line[0] not in "#"]
    assert commands[-1] == blocks[1]
