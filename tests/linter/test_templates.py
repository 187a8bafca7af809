"""Templates (Helm ``*.yaml.tpl``, helmfile ``*.yaml.gotmpl``): linted at the template's own lines and columns once
their actions are neutralised, or listed as skipped with the reason; found in directories; never migrated."""

from __future__ import annotations

import io
import json
import os
import re
import shutil

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from desched.cli import main
from desched.linter.engine import Settings, lint_text
from desched.linter.formatters import Report, get
from desched.linter.lint import lint_paths
from desched.linter.templates import TemplateError, neutralize
from desched.migrate.command import run as migrate
from desched.reading.sources import iter_paths

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "templates")
HELM = os.path.join(FIXTURES, "descheduler.yaml.tpl")
HELMFILE = os.path.join(FIXTURES, "values.yaml.gotmpl")
BROKEN = os.path.join(FIXTURES, "broken-policy.yaml.tpl")
NOT_YAML = os.path.join(FIXTURES, "annotations.yaml.tpl")
BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # as libyaml counts lines
V1ALPHA1 = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-descheduler
data:
  policy.yaml: |
    apiVersion: "descheduler/v1alpha1"
    kind: "DeschedulerPolicy"
    strategies:
      "RemoveDuplicates":
         enabled: {{ .Values.dedupe }}
"""


def read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def active(run_findings):
    return [(f.rule, os.path.basename(f.file), f.line, f.column) for f in run_findings if f.suppressed is None]


# --- neutralising -------------------------------------------------------------------------------------------------


def test_lines_of_actions_alone_become_blank_and_actions_among_text_placeholders():
    text = (
        "{{- if .Values.on }}\n"
        "metadata:\n"
        '  name: {{ include "x.fullname" . }}-descheduler\n'
        "  labels:\n"
        '    {{- include "x.labels" . | nindent 4 }}\n'
        "  {{/* a comment */}} # and a YAML one\n"
        "{{ end }}\n"
    )
    neutral = neutralize(text)
    assert neutral.text.splitlines() == [
        " " * 20,
        "metadata:",
        "  name: __ include _x.fullname_ . __-descheduler",
        "  labels:",
        " " * 43,
        " " * 22 + "# and a YAML one",
        " " * 9,
    ]
    assert yaml.safe_load(neutral.text) == {
        "metadata": {"name": "__ include _x.fullname_ . __-descheduler", "labels": None}
    }
    assert neutral.covers(3, 9) and neutral.covers(3, 36) and not neutral.covers(3, 37) and not neutral.covers(3, 8)
    assert not neutral.covers(1, 1)  # a blank line holds no placeholder


def test_strings_comments_and_lines_inside_an_action_do_not_end_it():
    text = 'a: {{ "}}" | cat `raw }}\n}}` /* x }} */ }} b\nc: {{ dict "k"\n  1 }}\nd: 1\n'
    neutral = neutralize(text)
    assert [len(line) for line in BREAKS.split(neutral.text)] == [len(line) for line in BREAKS.split(text)]
    lines = neutral.text.split("\n")
    assert lines[0] == "a: __ ____ _ cat _raw __"  # only the first line of an action is a placeholder
    assert lines[1] == " " * 17 + " b"
    assert lines[3] == " " * 6 and lines[4] == "d: 1"
    assert "{" not in neutral.text and "}" not in neutral.text


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("a: 1\nb: {{ .Values.b\n", "template action is never closed (no }})", (2, 4)),
        ('a: {{ "}} }}\n', "string in a template action is never closed", (1, 7)),
        ("a:\n  {{/* no end }}\n", "comment in a template action is never closed", (2, 5)),
        ("a: {{ `raw }}\n", "raw string in a template action is never closed", (1, 7)),
    ],
)
def test_an_action_never_closed_is_an_error_with_its_position(text, message, position):
    with pytest.raises(TemplateError) as caught:
        neutralize(text)
    assert (caught.value.message, caught.value.line, caught.value.column) == (message, *position)


# Text outside actions: no braces (so no action starts there), anything else YAML or Go might make something of.
_PLAIN = st.text(st.sampled_from(list("ab:-# \t'\"`/*\n\r\x85\u2028.|")), max_size=12)
# Inside an action: words, line breaks, and strings and comments that may hold "}}" and "{{".
_INNER = st.lists(
    st.text(st.sampled_from(list("ab.$|-( )\n\r\t")), max_size=6)
    | st.text(st.sampled_from(list("ab {}\t:#")), max_size=6).map(lambda s: f'"{s}"')
    | st.text(st.sampled_from(list("ab {}\n:#'\"")), max_size=6).map(lambda s: f"`{s}`")
    | st.text(st.sampled_from(list("ab {}\n:#'\"`")), max_size=6).map(lambda s: f"/*{s}*/"),
    max_size=4,
).map("".join)


@given(st.lists(st.tuples(_PLAIN, _INNER), max_size=6), _PLAIN)
def test_neutralising_keeps_every_line_length_and_all_text_outside_actions(pieces, tail):
    text = "".join(plain + "{{" + inner + "}}" for plain, inner in pieces) + tail
    outside = [True] * len(text)
    offset = 0
    for plain, inner in pieces:
        offset += len(plain)
        outside[offset : offset + len(inner) + 4] = [False] * (len(inner) + 4)
        offset += len(inner) + 4
    neutral = neutralize(text).text
    assert len(neutral) == len(text)
    assert [len(line) for line in BREAKS.split(neutral)] == [len(line) for line in BREAKS.split(text)]
    for index, char in enumerate(text):
        if outside[index] or char in "\r\n\x85\u2028\u2029":
            assert neutral[index] == char
        else:
            assert neutral[index] in (" ", "_", char)
    assert "{" not in neutral and "}" not in neutral


# --- linting ------------------------------------------------------------------------------------------------------


def test_a_helm_template_with_a_policy_in_a_block_is_linted_without_findings_about_its_values():
    run = lint_paths([HELM])
    assert (run.files, run.skipped, run.unreadable) == (1, (), [])
    assert active(run.findings) == []
    # the same text as plain YAML: the values that are template actions would be wrong types
    plain = lint_text("descheduler.yaml", neutralize(read(HELM)).text, Settings())
    assert {(f.rule, f.line, f.column) for f in plain.findings} == {
        ("DS004", 15, 32),
        ("DS004", 22, 22),
        ("DS004", 27, 22),
    }


def test_a_helmfile_values_template_is_linted_at_the_lines_of_the_template():
    run = lint_paths([HELMFILE])
    assert active(run.findings) == [("DS103", "values.yaml.gotmpl", 13, 13)]
    assert "release v0.34.0 assumed" in run.findings[0].message  # image.tag is plain YAML: it still counts
    assert read(HELMFILE).splitlines()[12][12:].startswith("ignorePvcPods:")


def test_a_broken_policy_in_a_template_is_reported_at_the_line_and_column_of_the_template():
    run = lint_paths([BROKEN])
    [error] = [f for f in run.findings if f.severity == "error"]
    assert (error.rule, error.line, error.column) == ("DS005", 16, 58)
    assert read(BROKEN).splitlines()[15][57:].startswith('"RemoveDuplicatez"')
    assert "RemoveDuplicatez" in error.message
    # the action in the same list is not a plugin name desched can judge: no finding points at it
    assert all((f.line, f.column) != (16, 23) for f in run.findings)
    assert run.sources[BROKEN] == read(BROKEN)  # offending lines are shown from the template itself


def test_suppression_comments_in_a_template_apply(tmp_path):
    text = read(BROKEN).replace('"RemoveDuplicatez"]', '"RemoveDuplicatez"]  # desched: disable=DS005 fixed in values')
    (tmp_path / "cm.yaml.tpl").write_text(text)
    run = lint_paths([str(tmp_path)])
    assert [f.suppressed for f in run.findings if f.rule == "DS005"] == ["fixed in values"]


def test_a_template_that_is_not_yaml_once_neutralised_is_skipped_with_the_reason():
    run = lint_paths([NOT_YAML, HELM])
    assert run.files == 1 and run.findings == []
    [(file, reason)] = run.skipped
    assert file == NOT_YAML
    assert reason == (
        "not YAML once its template actions are neutralised (line 9, column 24: mapping values are not allowed in "
        "this context)"
    )
    unclosed = lint_text("x.yaml.tpl", "a: {{ .Values.a\n", Settings())
    assert unclosed.skipped == "template action is never closed (no }}) (line 1, column 4)" and not unclosed.findings


def test_outside_a_chart_templates_are_read_as_templates_by_name_only(tmp_path):
    (tmp_path / "_helpers.tpl").write_text('{{- define "x" -}}\n{{- end -}}\n')
    (tmp_path / "values.gotmpl").write_text("a: {{ .b }}\n")
    for name in ("a.yaml.tpl", "b.yml.tpl", "c.yaml.gotmpl", "d.yaml", "e.yml"):
        (tmp_path / name).write_text("a: {{ .b }}\n")
    found = sorted(os.path.basename(path) for path in iter_paths([str(tmp_path)], [], lambda *_: None))
    assert found == ["a.yaml.tpl", "b.yml.tpl", "c.yaml.gotmpl", "d.yaml", "e.yml"]
    assert lint_text("a.yaml.tpl", "a: {{ .b }}\n", Settings()).skipped is None
    assert lint_text("d.yaml", "a: {{ .b }}\n", Settings()).template is None  # plain YAML: {{ }} is a flow mapping


def test_every_file_under_a_charts_templates_folder_is_a_template(tmp_path, monkeypatch):
    chart = tmp_path / "deploy" / "chart"
    (chart / "templates" / "webhook").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("a: 1\n")
    (chart / "templates" / "webhook" / "service.yaml").write_text(
        "{{- if .Values.webhook }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n"
    )
    (chart / "templates" / "policy.yaml").write_text(read(BROKEN))
    lookalike = tmp_path / "not-a-chart" / "templates"  # no Chart.yaml beside it: plain YAML
    lookalike.mkdir(parents=True)
    (lookalike / "x.yaml").write_text("a: {{ .b }}\n")
    run = lint_paths([str(tmp_path)])
    assert run.skipped == () and run.unreadable == []
    assert {
        (f.rule, os.path.relpath(f.file, tmp_path), f.line, f.column) for f in run.findings if f.severity == "error"
    } == {
        ("DS005", os.path.join("deploy", "chart", "templates", "policy.yaml"), 16, 58),  # at the template's place
        ("DS001", os.path.join("not-a-chart", "templates", "x.yaml"), 1, 5),  # read as YAML: not a template
    }
    assert lint_text(str(chart / "templates" / "policy.yaml"), read(BROKEN), Settings()).template is not None
    assert lint_text(str(chart / "values.yaml"), "a: {{ .b }}\n", Settings()).template is None
    assert lint_text(str(lookalike / "x.yaml"), "a: {{ .b }}\n", Settings()).template is None
    monkeypatch.chdir(chart)  # a relative name is a template by the folder it names from here
    assert lint_text(os.path.join("templates", "policy.yaml"), read(BROKEN), Settings()).template is not None


# --- output -------------------------------------------------------------------------------------------------------


def test_the_summary_lists_skipped_templates():
    render = get("text")
    report = Report(findings=[], files=2, rules={}, skipped=[("t.yaml.tpl", "why")])
    assert render(report).splitlines() == [
        "skipped t.yaml.tpl: why",
        "no problems found in 2 files; 1 template skipped",
    ]
    nothing = Report(findings=[], files=0, rules={}, skipped=[("a.yaml.tpl", "x"), ("b.yaml.tpl", "y")])
    assert render(nothing).splitlines()[-1] == "nothing was checked: 2 templates skipped"
    data = json.loads(get("json")(report))
    assert data["summary"] == {
        "files": 2,
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "skipped": [{"file": "t.yaml.tpl", "reason": "why"}],
    }


def test_linting_a_directory_holding_only_a_template_that_does_not_parse_says_it_was_skipped(tmp_path, capsys):
    shutil.copy(NOT_YAML, tmp_path / "annotations.yaml.tpl")
    assert main(["lint", "--no-config", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"skipped {tmp_path / 'annotations.yaml.tpl'}: not YAML once its template actions are neutralised (line 9, "
        "column 24: mapping values are not allowed in this context)",
        "nothing was checked: 1 template skipped",
    ]
    assert "no problems found in 0 files" not in out


def test_the_command_line_lints_templates_in_a_directory(tmp_path, capsys):
    for path in (HELM, HELMFILE, BROKEN, NOT_YAML):
        shutil.copy(path, tmp_path)
    assert main(["lint", "--no-config", "--format", "json", str(tmp_path)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {(os.path.basename(f["file"]), f["rule"], f["line"], f["column"]) for f in data["findings"]} >= {
        ("broken-policy.yaml.tpl", "DS005", 16, 58),
        ("values.yaml.gotmpl", "DS103", 13, 13),
    }
    assert data["summary"]["files"] == 3
    assert [os.path.basename(item["file"]) for item in data["summary"]["skipped"]] == ["annotations.yaml.tpl"]
    assert main(["lint", "--no-config", str(tmp_path / "annotations.yaml.tpl")]) == 0
    assert capsys.readouterr().out.endswith("nothing was checked: 1 template skipped\n")


def test_stdin_is_a_template_when_its_name_says_so(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(read(BROKEN).encode())))
    assert main(["lint", "--no-config", "--format", "json", "--stdin-filename", "cm.yaml.tpl", "-"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert ("DS005", 16, 58) in {(f["rule"], f["line"], f["column"]) for f in findings}


# --- migrate and hooks --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["check", "in-place", "print"])
def test_migrate_leaves_templates_alone_with_a_note(tmp_path, mode):
    template = tmp_path / "descheduler.yaml.tpl"
    template.write_text(V1ALPHA1)
    out, err = io.StringIO(), io.StringIO()
    assert migrate([str(tmp_path)], mode=mode, stdout=out, stderr=err) == 0
    assert out.getvalue() == ""
    assert err.getvalue() == f"{template}: note: template not migrated (desched migrate cannot rewrite templates)\n"
    assert template.read_text() == V1ALPHA1
    quiet = io.StringIO()
    assert migrate([str(template)], mode=mode, quiet=True, stdout=out, stderr=quiet) == 0 and quiet.getvalue() == ""


def test_the_hooks_take_the_file_kinds_their_commands_read():
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        hooks = {hook["id"]: hook for hook in yaml.safe_load(handle)}
    names = ["a.yaml", "a.yml", "c/a.yaml.tpl", "a.yml.tpl", "helmfile/values.yaml.gotmpl"]
    assert all(re.search(hooks["desched-lint"]["files"], name) for name in names)
    assert not any(re.search(hooks["desched-lint"]["files"], name) for name in ("_helpers.tpl", "README.md", "a.tpl"))
    migrated = hooks["desched-migrate"]["files"]
    assert re.search(migrated, "a.yaml") and not any(re.search(migrated, name) for name in names[2:])
