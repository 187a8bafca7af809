"""The terminal format: grouping, summary wording, colours, carets, and text that cannot drive the terminal."""

from __future__ import annotations

import pytest

from desched.linter.finding import Finding
from desched.linter.formatters import Report, get

from .cases import CASES, RULES

render = get("text")


def report(*findings: Finding, files: int = 1, sources: dict[str, str] | None = None, color: bool = False) -> Report:
    return Report(
        findings=sorted(findings, key=Finding.sort_key),
        files=files,
        rules=dict(RULES),
        sources=sources or {},
        color=color,
    )


def error(line: int = 1, column: int = 1, message: str = "bad", file: str = "a.yaml", **extra: object) -> Finding:
    return Finding("DS001", "error", file, line, column, message, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("severities", "files", "summary"),
    [
        ((), 0, "no YAML files to lint: nothing was checked"),  # an empty directory is not a clean one
        ((), 1, "no problems found in 1 file"),
        (("error",), 1, "1 error, 0 warnings, 0 infos in 1 file"),
        (("error", "error", "warning", "info"), 2, "2 errors, 1 warning, 1 info in 2 files"),
        (("info", "info", "warning", "warning"), 3, "0 errors, 2 warnings, 2 infos in 3 files"),
    ],
)
def test_summary_wording(severities, files, summary):
    findings = [Finding("DS001", severity, "a.yaml", n + 1, 1, "m") for n, severity in enumerate(severities)]
    assert render(report(*findings, files=files)).splitlines()[-1] == summary


def test_suppressed_findings_are_not_shown_but_counted():
    text = render(report(error(message="hidden", suppressed="because"), error(2, message="shown")))
    assert "hidden" not in text and "because" not in text
    assert text.splitlines()[-1] == "1 error, 0 warnings, 0 infos in 1 file (1 suppressed)"
    only_suppressed = render(report(error(suppressed="")))
    assert only_suppressed == "no problems found in 1 file (1 suppressed)\n"


def test_finding_line_layout_and_object():
    text = render(report(error(12, 9, "too high", object="ConfigMap kube-system/descheduler")))
    assert text.splitlines()[:2] == [
        "a.yaml",
        "  12:9      error    too high  (DS001) [ConfigMap kube-system/descheduler]",
    ]


def test_no_ansi_without_color_and_styles_with_it():
    plain = render(CASES["mixed"]())
    assert "\x1b" not in plain
    report = CASES["mixed"]()
    report.color = True
    colored = render(report)
    assert "\x1b[31merror\x1b[0m" in colored and "\x1b[33mwarning\x1b[0m" in colored
    assert "\x1b[34minfo\x1b[0m" in colored and "\x1b[1;4mdeploy/configmap.yaml\x1b[0m" in colored
    assert "\x1b[2m(DS302)\x1b[0m" in colored


def excerpt(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    return lines[2], lines[3]


def caret_target(source_line: str, caret_line: str) -> str:
    """The character of the shown source line above the caret (no tabs or wide characters involved)."""
    return source_line[caret_line.index("^")]


@pytest.mark.parametrize(
    ("source", "column", "target"),
    [
        ("key: value", 6, "v"),
        ("key: value", 1, "k"),
        ("a\x1bb: c", 3, "b"),  # the escape is shown as \x1b, the caret still finds "b"
        ("x\u202ey: z", 3, "y"),  # bidi override made visible
        ("é́a: b", 3, "a"),  # a combining accent takes no cell
    ],
)
def test_caret_points_at_the_column(source, column, target):
    shown, caret = excerpt(render(report(error(1, column), sources={"a.yaml": source + "\n"})))
    assert "\x1b" not in shown and "\u202e" not in shown
    if "\u0301" in source:
        assert caret.index("^") == shown.index(target) - 1  # one code point, zero cells
    else:
        assert caret_target(shown, caret) == target


def test_caret_after_wide_characters_and_tabs():
    shown, caret = excerpt(render(report(error(1, 4), sources={"a.yaml": "日本\tx: y"})))
    assert shown == "    日本\tx: y"
    assert caret == "    " + "    " + "\t^"


def test_column_past_the_end_and_missing_lines():
    shown, caret = excerpt(render(report(error(1, 99), sources={"a.yaml": "ab"})))
    assert caret.index("^") == len(shown)
    text = render(report(error(7, 1), sources={"a.yaml": "ab\n"}))
    assert "^" not in text
    assert "^" not in render(report(error(1, 1)))  # no source at all


def test_lines_are_counted_the_way_libyaml_counts_them():
    source = "one\r\ntwo\rthree\u2028four\nfive"
    for line, word in enumerate(["one", "two", "three", "four", "five"], start=1):
        shown, _ = excerpt(render(report(error(line, 1), sources={"a.yaml": source})))
        assert shown == f"    {word}"


def test_long_source_lines_are_windowed_around_the_column():
    source = "a" * 500 + "X" + "b" * 500
    shown, caret = excerpt(render(report(error(1, 501), sources={"a.yaml": source})))
    assert len(shown) < 200 and shown.strip().startswith("...") and shown.endswith("...")
    assert caret_target(shown, caret) == "X"
    shown, caret = excerpt(render(report(error(1, 2), sources={"a.yaml": source})))
    assert not shown.strip().startswith("...") and caret_target(shown, caret) == "a"


def test_multi_line_messages_are_indented_and_controls_escaped():
    text = render(report(error(message="first\nsecond\x1b[2J", file="evil\x1b]0;x\x07.yaml")))
    lines = text.splitlines()
    assert lines[0] == "evil\\x1b]0;x\\x07.yaml"
    assert lines[1].endswith("first") and lines[2].strip() == "second\\x1b[2J  (DS001)"
    assert "\x1b" not in text and "\x07" not in text


def test_stdin_and_undecodable_names_are_readable_and_encodable():
    text = render(report(error(file="-"), error(file="bad\udcff.yaml"), files=2))
    text.encode("utf-8")
    assert "<stdin>" in text and "bad\\udcff.yaml" in text


def test_groups_keep_report_order():
    findings = [error(1, file="b.yaml"), error(1, file="a.yaml"), error(2, file="b.yaml")]
    unsorted = Report(findings=findings, files=2, rules=dict(RULES))
    headers = [line for line in render(unsorted).splitlines() if line.endswith(".yaml")]
    assert headers == ["b.yaml", "a.yaml"]
