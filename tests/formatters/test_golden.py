"""Every formatter against its golden file, for every hand-made case."""

from __future__ import annotations

import pytest

from desched.linter.formatters import FORMATTERS, get

from .cases import CASES, anchored

SUFFIXES = {
    "text": "txt",
    "json": "json",
    "sarif": "sarif.json",
    "junit": "junit.xml",
    "github": "github.txt",
}


def test_every_format_has_a_golden_suffix():
    assert set(SUFFIXES) == set(FORMATTERS)


@pytest.mark.parametrize("format_name", sorted(FORMATTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, format_name, golden):
    report = CASES[case]()
    if format_name == "sarif":
        report = anchored(report)  # URIs relative to a fixed base_dir, whatever the current directory
    golden(f"{case}.{SUFFIXES[format_name]}", get(format_name)(report))


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_text_in_color(case, golden):
    report = CASES[case]()
    report.color = True
    golden(f"{case}.color.txt", get("text")(report))


@pytest.mark.parametrize("format_name", sorted(FORMATTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_output_is_deterministic_and_encodable(case, format_name):
    render = get(format_name)
    first = render(CASES[case]())
    assert first == render(CASES[case]())
    first.encode("utf-8")
