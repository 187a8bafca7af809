"""The library surface: ``desched.__all__`` is the contract, every name resolves, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import desched
from desched.errors import DeschedError

ROOT = Path(__file__).resolve().parents[2]
EXPORTED = [
    "DeschedError",
    "FileResult",
    "Finding",
    "LintRun",
    "Settings",
    "__version__",
    "lint_paths",
    "lint_text",
    "load_config",
    "settings_from",
]
POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
    "  - name: RemoveDuplicatez\n  plugins:\n    balance:\n      enabled: [RemoveDuplicatez]\n"
)


def test_the_exported_members_are_the_contract():
    assert sorted(desched.__all__) == EXPORTED
    for name in desched.__all__:
        assert getattr(desched, name) is not None
    assert set(desched.__all__) <= set(dir(desched))


def test_unknown_names_raise_attribute_error():
    try:
        desched.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("desched.no_such_thing resolved")


def test_lint_paths_and_lint_text_agree_with_the_command_line(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    run = desched.lint_paths([str(tmp_path)], desched.settings_from(desched.load_config(None)))
    assert run.files == 1 and run.unreadable == []
    assert {finding.rule for finding in run.findings} >= {"DS005"}
    assert all(isinstance(finding, desched.Finding) for finding in run.findings)
    single = desched.lint_text(str(policy), POLICY, desched.Settings())
    assert [f.rule for f in single.findings] == [f.rule for f in run.findings if f.file == str(policy)]
    missing = desched.lint_paths([str(tmp_path / "missing.yaml")])
    assert missing.files == 0 and missing.unreadable and missing.unreadable[0].startswith("cannot read ")


def test_errors_share_one_base():
    from desched import errors

    leaves = [errors.UsageError, errors.ConfigError, errors.InputError, errors.KubeError, errors.PolicyRefused]
    assert all(issubclass(leaf, DeschedError) for leaf in leaves)


def test_import_desched_loads_neither_the_linter_nor_heavy_libraries():
    code = "import sys, desched; print(sorted(m for m in sys.modules if m.startswith(('desched.linter', 'yaml'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def _public_classes() -> dict[str, list[str]]:
    """Every public class of the product by name, with the modules that define one."""
    import ast

    found: dict[str, list[str]] = {}
    for folder in ("kernel", "linter", "webhook", "executor"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    found.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    return found


def test_no_two_public_classes_share_a_name():
    """A name means one thing. The one exception is the protocol of the executor's plugin modules: each defines the
    ``Implementation`` of the plugin it names (desched.executor.framework)."""
    shared = {name: paths for name, paths in _public_classes().items() if len(paths) > 1}
    implementations = shared.pop("Implementation", [])
    assert implementations and all(path.startswith("executor/plugins/") for path in implementations)
    assert shared == {}
