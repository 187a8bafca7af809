"""The CLI as users and CI see it: exit codes, formats, hostile input, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from desched.cli import main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOOD = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)
BAD = GOOD.replace("RemoveDuplicates]", "RemoveDuplicatez]")
WARN = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text(BAD)
    (tmp_path / "warn.yaml").write_text(WARN)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "desched", *args], capture_output=True, text=True, timeout=120, cwd=os.getcwd()
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_exit_0_when_clean(tree, capsys):
    assert main(["lint", "good.yaml"]) == 0
    assert "no problems" in capsys.readouterr().out


def test_exit_0_with_warnings_and_1_with_strict(tree):
    assert main(["lint", "warn.yaml"]) == 0
    assert main(["lint", "--strict", "warn.yaml"]) == 1


def test_exit_1_on_errors_and_exit_zero_flag(tree):
    assert main(["lint", "bad.yaml"]) == 1
    assert main(["lint", "--exit-zero", "bad.yaml"]) == 0


def test_json_contract(tree, capsys):
    assert main(["lint", "--format", "json", "good.yaml", "bad.yaml"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"findings", "summary"}
    assert data["summary"] == {"files": 2, "errors": 1, "warnings": 1, "infos": 0}
    assert [f["rule"] for f in data["findings"]] == ["DS204", "DS005"]  # the entry is unused: its plugin is misspelt
    finding = data["findings"][1]
    assert finding["rule"] == "DS005" and finding["file"] == "bad.yaml"
    assert (finding["line"], finding["column"]) == (9, 17)
    assert finding["path"] == "/profiles/0/plugins/balance/enabled/0"
    assert set(finding) == {"rule", "severity", "file", "line", "column", "message", "object", "path"}


def test_several_formats_in_one_run(tree, capsys):
    assert main(["lint", "--format", "sarif", "--output", "out.sarif", "--format", "text", "bad.yaml"]) == 1
    assert "DS005" in capsys.readouterr().out
    sarif = json.loads((tree / "out.sarif").read_text())
    assert {result["ruleId"] for result in sarif["runs"][0]["results"]} == {"DS005", "DS204"}


def test_short_options_pair_like_the_long_ones(tree, capsys):
    # -o is --output (issue 27, item 7): it binds to the -f before it and leaves stdout to the other formats
    assert main(["lint", "-f", "json", "-o", "out.json", "-f", "text", "bad.yaml"]) == 1
    assert "DS005" in capsys.readouterr().out
    data = json.loads((tree / "out.json").read_text())
    assert [f["rule"] for f in data["findings"]] == ["DS204", "DS005"]
    assert main(["lint", "-o", "x.json", "good.yaml"]) == 2  # like --output: it must follow a format
    assert "must follow a --format" in capsys.readouterr().err
    assert not (tree / "x.json").exists()


def test_directory_is_walked_and_ignore_globs_apply(tree, capsys):
    os.mkdir(tree / ".git")
    (tree / ".git" / "x.yaml").write_text(BAD)
    os.mkdir(tree / "sub")
    (tree / "sub" / "bad.yml").write_text(BAD)
    (tree / "sub" / "notes.txt").write_text(BAD)
    assert main(["lint", "--format", "json", "."]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {f["file"] for f in findings if f["severity"] == "error"} == {"./bad.yaml", "./sub/bad.yml"}
    assert main(["lint", "--format", "json", "--ignore", "sub", "--ignore", "bad.yaml", "."]) == 0


def test_stdin(tree, monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    assert main(["lint", "--format", "json", "--stdin-filename", "policy.yaml", "-"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["file"] == "policy.yaml"


def test_disable_and_target_version(tree, capsys):
    assert main(["lint", "--disable", "DS005", "bad.yaml"]) == 0
    assert main(["lint", "--disable", "unknown-plugin", "bad.yaml"]) == 0
    assert main(["lint", "--target-version", "v0.12", "good.yaml"]) == 2
    assert "unsupported descheduler version" in capsys.readouterr().err


def test_missing_file_is_exit_2_but_others_are_still_reported(tree, capsys):
    assert main(["lint", "--format", "json", "nope.yaml", "bad.yaml"]) == 2
    captured = capsys.readouterr()
    assert "desched: cannot read nope.yaml" in captured.err
    assert json.loads(captured.out)["summary"]["errors"] == 1


def test_rules_and_explain(capsys):
    assert main(["rules"]) == 0
    assert "DS302" in capsys.readouterr().out
    assert main(["explain", "DS302"]) == 0
    assert "threshold" in capsys.readouterr().out
    assert main(["explain", "DS999"]) == 2


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("binary.yaml", b"\x00\x01\x02apiVersion", "binary file"),
        ("latin1.yaml", "kind: DeschedulerPolicy\nname: caf\xe9\n".encode("latin-1"), "invalid UTF-8"),
        ("deep.yaml", b"a: " + b"[" * 100_000 + b"]" * 100_000, ""),  # libyaml or desched refuses it: any wording
        ("bomb.yaml", None, "alias bomb"),
    ],
    ids=["binary", "latin1", "deep", "bomb"],
)
def test_hostile_files_give_ds001_without_traceback(tree, name, content, message):
    if content is None:
        lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
        for index in range(1, 10):
            prev, cur = chr(96 + index), chr(97 + index)
            lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
        content = ("\n".join(lines) + "\n").encode()
    (tree / name).write_bytes(content)
    code, out, err = run("lint", "--format", "json", name)
    assert code == 1, err
    assert "Traceback" not in err
    [finding] = json.loads(out)["findings"]
    assert finding["rule"] == "DS001" and message in finding["message"]
    assert finding["line"] >= 1 and finding["column"] >= 1


def test_huge_file_is_refused_quickly(tree):
    with open(tree / "huge.yaml", "wb") as handle:
        line = b"key: " + b"x" * 1000 + b"\n"
        for _ in range(50 * 1024):
            handle.write(line)
    code, out, err = run("lint", "--format", "json", "huge.yaml")
    assert code == 1 and "Traceback" not in err
    assert "larger than" in json.loads(out)["findings"][0]["message"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads directories regardless of permissions")
def test_unreadable_directory_is_exit_2(tree):  # pragma: no cover - CI runs as root
    locked = tree / "locked"
    locked.mkdir()
    os.chmod(locked, 0)
    try:
        code, _, err = run("lint", "locked")
    finally:
        os.chmod(locked, 0o755)
    assert code == 2 and "cannot read locked" in err


def test_unreadable_directory_as_root_via_fault(tree, monkeypatch, capsys):
    """Root ignores permission bits, so the same path is exercised by making scandir fail."""
    import desched.reading.sources as sources

    (tree / "locked").mkdir()
    real = os.scandir

    def failing(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(sources.os, "scandir", failing)
    assert main(["lint", "locked", "good.yaml"]) == 2
    assert "cannot read locked: Permission denied" in capsys.readouterr().err


def test_usage_error_is_exit_2(tree):
    code, _, err = run("lint", "--format", "nope")
    assert code == 2 and "invalid choice" in err
    code, _, err = run("lint", "--output", "x.json", "good.yaml")
    assert code == 2 and "must follow a --format" in err


def test_broken_config_is_exit_2_with_one_line(tree):
    (tree / ".desched.yaml").write_text("rules:\n  DS999: error\n")
    code, _, err = run("lint", "good.yaml")
    assert code == 2 and "no such rule" in err and "Traceback" not in err


def test_examples_run_as_documented():
    proc = subprocess.run(
        [sys.executable, "-m", "desched", "lint", "--format", "json", "examples"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    data = json.loads(proc.stdout)
    files = {f["file"].replace(os.sep, "/") for f in data["findings"] if f["severity"] == "error"}
    assert all(name.startswith("examples/broken/") for name in files)
    assert {f"examples/broken/{n}" for n in os.listdir(os.path.join(ROOT, "examples", "broken"))} == files
    assert proc.returncode == 1
