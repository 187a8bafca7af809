"""``desched migrate`` as users and CI run it: modes, exit codes, atomic writes, stdin, errors without tracebacks."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from desched.cli import main
from desched.linter.lint import lint_paths
from desched.migrate import command

ROOT = Path(__file__).resolve().parents[3]

V1ALPHA1 = """\
# keep me
apiVersion: "descheduler/v1alpha1"
kind: DeschedulerPolicy
strategies:
  RemoveDuplicates:
    enabled: true
    weight: 1
"""
V1ALPHA2 = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: p
    pluginConfig:
      - name: RemoveDuplicates
    plugins:
      balance:
        enabled: [RemoveDuplicates]
"""
UNKNOWN = V1ALPHA1 + "  Bogus:\n    enabled: true\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.yaml").write_text(V1ALPHA1)
    (tmp_path / "new.yaml").write_text(V1ALPHA2)
    return tmp_path


def _migrated() -> str:
    return command.migrate_text("old.yaml", V1ALPHA1).text


def test_prints_one_file_as_is_and_notes_on_stderr(tree, capsys):
    assert main(["migrate", "old.yaml"]) == 0
    out, err = capsys.readouterr()
    assert out == _migrated()
    note = "strategies.RemoveDuplicates.weight (1) was dropped: the descheduler never used it"
    written, dropped = err.splitlines()
    assert written.startswith("old.yaml:2: note: written for descheduler v0.31-v0.36: no release is deployed")
    assert dropped == f"old.yaml:7: note: {note}"
    assert (tree / "old.yaml").read_text() == V1ALPHA1
    assert main(["migrate", "new.yaml"]) == 0
    assert capsys.readouterr().out == V1ALPHA2


def test_several_files_print_only_what_changes_with_headers(tree, capsys):
    assert main(["migrate", "-q", "."]) == 0
    out, err = capsys.readouterr()
    assert out == f"# ==> ./old.yaml <==\n{_migrated()}" and err == ""


def test_check_lists_files_and_exits_1(tree, capsys):
    assert main(["migrate", "--check", "old.yaml", "new.yaml"]) == 1
    out, _ = capsys.readouterr()
    assert out == "would migrate old.yaml\n"
    assert main(["migrate", "--check", "new.yaml"]) == 0
    assert capsys.readouterr().out == ""
    assert (tree / "old.yaml").read_text() == V1ALPHA1


def test_diff_prints_a_patch_and_exits_1(tree, capsys):
    assert main(["migrate", "--diff", "-q", "old.yaml", "new.yaml"]) == 1
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:2] == ["--- old.yaml", "+++ old.yaml"]
    assert '-apiVersion: "descheduler/v1alpha1"' in lines and '+apiVersion: "descheduler/v1alpha2"' in lines
    assert " # keep me" in lines
    assert main(["migrate", "--diff", "new.yaml"]) == 0
    assert capsys.readouterr().out == ""


def test_diff_marks_a_missing_final_newline(tree, capsys):
    (tree / "old.yaml").write_text(V1ALPHA1.rstrip("\n"))
    assert main(["migrate", "--diff", "-q", "old.yaml"]) == 1
    assert "\\ No newline at end of file\n" in capsys.readouterr().out


def test_in_place_rewrites_keeps_mode_and_is_then_clean(tree, capsys):
    os.chmod(tree / "old.yaml", 0o640)
    assert main(["migrate", "--in-place", "."]) == 0
    _, err = capsys.readouterr()
    assert "migrated ./old.yaml" in err
    assert (tree / "old.yaml").read_text() == _migrated()
    assert stat.S_IMODE(os.stat(tree / "old.yaml").st_mode) == 0o640
    assert (tree / "new.yaml").read_text() == V1ALPHA2
    assert sorted(os.listdir(tree)) == ["new.yaml", "old.yaml"]
    assert main(["migrate", "--check", "."]) == 0


def test_last_mode_flag_wins_so_a_hook_can_switch_to_in_place(tree, capsys):
    assert main(["migrate", "--check", "--in-place", "old.yaml"]) == 0
    assert (tree / "old.yaml").read_text() == _migrated()


def test_in_place_keeps_bom_and_crlf(tree):
    data = b"\xef\xbb\xbf" + V1ALPHA1.replace("\n", "\r\n").encode()
    (tree / "old.yaml").write_bytes(data)
    assert main(["migrate", "-i", "-q", "old.yaml"]) == 0
    written = (tree / "old.yaml").read_bytes()
    assert written.startswith(b"\xef\xbb\xbf# keep me\r\n")
    assert b"\n" not in written.replace(b"\r\n", b"")
    assert b"descheduler/v1alpha2" in written


def test_in_place_keeps_utf16(tree):
    (tree / "old.yaml").write_bytes(b"\xff\xfe" + V1ALPHA1.encode("utf-16-le"))
    assert main(["migrate", "-i", "-q", "old.yaml"]) == 0
    written = (tree / "old.yaml").read_bytes()
    assert written.startswith(b"\xff\xfe") and written[2:].decode("utf-16-le") == _migrated()


def test_in_place_writes_through_a_symlink(tree):
    os.symlink("old.yaml", tree / "link.yaml")
    assert main(["migrate", "-i", "-q", "link.yaml"]) == 0
    assert os.path.islink(tree / "link.yaml")
    assert (tree / "old.yaml").read_text() == _migrated()


def test_refused_file_is_untouched_others_still_migrated(tree, capsys):
    (tree / "bad.yaml").write_text(UNKNOWN)
    assert main(["migrate", "--in-place", "-q", "bad.yaml", "old.yaml"]) == 2
    _, err = capsys.readouterr()
    assert err == "desched: bad.yaml:8:3: unknown strategy name: Bogus\n"
    assert (tree / "bad.yaml").read_text() == UNKNOWN
    assert (tree / "old.yaml").read_text() == _migrated()


def test_crash_during_rename_leaves_the_original_and_no_temporary_file(tree, monkeypatch, capsys):
    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    assert main(["migrate", "--in-place", "old.yaml"]) == 2
    assert "desched: old.yaml: cannot write: No space left on device" in capsys.readouterr().err
    assert (tree / "old.yaml").read_text() == V1ALPHA1
    assert sorted(os.listdir(tree)) == ["new.yaml", "old.yaml"]


def test_interrupt_during_write_leaves_the_original_and_no_temporary_file(tree, monkeypatch):
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        command.write_atomic("old.yaml", "half")
    assert (tree / "old.yaml").read_text() == V1ALPHA1
    assert sorted(os.listdir(tree)) == ["new.yaml", "old.yaml"]


def test_interrupted_run_renames_nothing_and_leaves_no_temporary_file(tree, monkeypatch):
    (tree / "old2.yaml").write_text(V1ALPHA1)
    calls = []
    real = command.migrate_text

    def interrupted(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(command, "migrate_text", interrupted)
    with pytest.raises(KeyboardInterrupt):
        command.run(["old.yaml", "old2.yaml"], mode="in-place", quiet=True)
    assert (tree / "old.yaml").read_text() == V1ALPHA1  # staged, never renamed
    assert sorted(os.listdir(tree)) == ["new.yaml", "old.yaml", "old2.yaml"]


def test_missing_file_and_bad_target_version(tree, capsys):
    assert main(["migrate", "nope.yaml", "old.yaml"]) == 2
    out, err = capsys.readouterr()
    assert "desched: nope.yaml: cannot read: no such file or directory" in err
    assert out == f"# ==> old.yaml <==\n{_migrated()}"  # the readable file is still processed
    assert main(["migrate", "--target-version", "v0.20", "old.yaml"]) == 2
    assert "desched: unsupported descheduler version 'v0.20'" in capsys.readouterr().err


def test_chart_app_version_beside_values_sets_the_target(tree, capsys):
    values = "deschedulerPolicy:\n  evictLocalStoragePods: true\n  strategies:\n    RemoveDuplicates: {enabled: true}\n"
    (tree / "values.yaml").write_text(values)
    assert main(["migrate", "-q", "values.yaml"]) == 0
    portable = capsys.readouterr().out  # no release named: what v0.31 to v0.36 all accept
    assert "evictLocalStoragePods: true" in portable and "podProtections" not in portable
    (tree / "Chart.yaml").write_text("apiVersion: v2\nname: descheduler\nappVersion: 0.36.0\n")
    assert main(["migrate", "values.yaml"]) == 0
    out, err = capsys.readouterr()
    assert "podProtections" in out
    assert "note: written for descheduler v0.36.0: appVersion 0.36.0 of the Chart.yaml beside the values" in err


def _cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if key != "DESCHED_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "desched", "migrate", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=120,
        check=False,
    )


def test_stdin_is_migrated_to_stdout():
    proc = _cli("-", stdin=V1ALPHA1.encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == _migrated()
    assert proc.stderr.decode().startswith("-:2: note: written for descheduler v0.31-v0.36")
    assert _cli("--check", "-", stdin=V1ALPHA1.encode()).stdout == b"would migrate -\n"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("invalid.yaml", b"apiVersion: descheduler/v1alpha1\nstrategies: [\n", "invalid YAML"),
        ("unknown.yaml", UNKNOWN.encode(), "unknown strategy name: Bogus"),
        (
            "priority.yaml",
            (V1ALPHA1 + "    params:\n      thresholdPriority: 5\n      thresholdPriorityClassName: low\n").encode(),
            "priority threshold misconfigured for plugin RemoveDuplicates",
        ),
        ("binary.yaml", b"apiVersion: descheduler/v1alpha1\n\x00\x01\x02", "binary file"),
    ],
)
def test_errors_are_one_line_never_a_traceback(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    for mode in ([], ["--in-place"], ["--check"]):
        proc = _cli(*mode, str(path))
        err = proc.stderr.decode()
        assert proc.returncode == 2, err
        assert "Traceback" not in err
        [line] = err.splitlines()
        assert line.startswith(f"desched: {path}:") and message in line
        assert path.read_bytes() == data


def test_pre_commit_hook_definition():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    [hook] = [hook for hook in hooks if hook["id"] == "desched-migrate"]
    assert hook["entry"] == "desched migrate --check"
    assert hook["language"] == "python"
    import re

    assert re.search(hook["files"], "deploy/values.yaml") and re.search(hook["files"], "p.yml")
    assert not re.search(hook["files"], "README.md")
    assert hook.get("pass_filenames", True) is True


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None, reason="needs pre-commit, git")
def test_pre_commit_try_repo_runs_the_migrate_hook(tmp_path):
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", "kernel/migrate/command.py"], cwd=ROOT, capture_output=True, check=False
    )
    if tracked.returncode != 0:
        pytest.skip("try-repo installs only tracked files: commit kernel/migrate first")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "old.yaml").write_text(V1ALPHA1)
    (tmp_path / "new.yaml").write_text(V1ALPHA2)
    git("add", ".")

    def run(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pre-commit", "try-repo", str(ROOT), "desched-migrate", "--files", *files],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
            timeout=1200,
        )

    failed = run("old.yaml", "new.yaml")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "would migrate old.yaml" in failed.stdout
    assert (tmp_path / "old.yaml").read_text() == V1ALPHA1
    passed = run("new.yaml")
    assert passed.returncode == 0, passed.stdout + passed.stderr


CONFIGMAP_V1ALPHA1 = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: descheduler-policy-configmap
  namespace: kube-system
data:
  policy.yaml: |
    apiVersion: "descheduler/v1alpha1"
    kind: "DeschedulerPolicy"
    evictLocalStoragePods: true
    strategies:
      "RemoveDuplicates":
         enabled: true
"""
CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: descheduler-cronjob
  namespace: kube-system
spec:
  schedule: "*/2 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: descheduler
            image: registry.k8s.io/descheduler/descheduler:TAG
            volumeMounts:
            - mountPath: /policy-dir
              name: policy-volume
            command: ["/bin/descheduler"]
            args: ["--policy-config-file", "/policy-dir/policy.yaml", "--v", "3"]
          restartPolicy: "Never"
          volumes:
          - name: policy-volume
            configMap:
              name: descheduler-policy-configmap
"""


@pytest.mark.parametrize(
    ("tag", "protections", "written_for"),
    [
        ("v0.35.0", True, "v0.35.0: the image registry.k8s.io/descheduler/descheduler:v0.35.0 of CronJob"),
        ("v0.33.0", False, "v0.33.0: the image registry.k8s.io/descheduler/descheduler:v0.33.0 of CronJob"),
        (None, False, "v0.31-v0.36: no release is deployed with this policy"),
    ],
)
def test_the_default_target_is_the_release_deployed_with_the_policy(tmp_path, capsys, tag, protections, written_for):
    (tmp_path / "configmap.yaml").write_text(CONFIGMAP_V1ALPHA1)
    if tag is not None:
        (tmp_path / "cronjob.yaml").write_text(CRONJOB.replace("TAG", tag))
    assert main(["migrate", "--in-place", str(tmp_path)]) == 0
    migrated = (tmp_path / "configmap.yaml").read_text()
    assert ("podProtections" in migrated) is protections
    assert ("evictLocalStoragePods: true" in migrated) is not protections
    assert f"configmap.yaml:8: note: written for descheduler {written_for}" in capsys.readouterr().err
    result = lint_paths([str(tmp_path)])
    assert [f.rule for f in result.findings if f.severity == "error"] == []


def test_the_default_target_of_a_policy_desched_run_reads_is_its_target_version(tmp_path, capsys):
    executor = (
        CRONJOB.replace("registry.k8s.io/descheduler/descheduler:TAG", "ghcr.io/desched/desched:0.1.0")
        .replace('command: ["/bin/descheduler"]', 'command: ["desched", "run"]')
        .replace(
            '"--policy-config-file", "/policy-dir/policy.yaml", "--v", "3"',
            '"--policy=/policy-dir/policy.yaml", "--target-version", "v0.33"',
        )
    )
    (tmp_path / "configmap.yaml").write_text(CONFIGMAP_V1ALPHA1)
    (tmp_path / "cronjob.yaml").write_text(executor)
    assert main(["migrate", "--in-place", str(tmp_path)]) == 0
    assert "podProtections" not in (tmp_path / "configmap.yaml").read_text()
    written_for = "v0.33: --target-version v0.33 of CronJob kube-system/descheduler-cronjob"
    assert f"configmap.yaml:8: note: written for descheduler {written_for}" in capsys.readouterr().err
