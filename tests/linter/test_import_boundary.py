"""The import graph points one way, and the lint path stays light: pre-commit runs it on every commit.

Layers, bottom up: the kernel (``desched`` and its own subpackages, folder ``kernel/``), then ``desched.linter``,
then ``desched.webhook`` and ``desched.executor``, which never import each other nor a command module of the linter.
``desched.cli`` is part of the kernel: it reaches commands by name (``module:attribute``), never by import. The
package root ``desched`` re-exports the library surface of the linter; it names it for type checkers only (under
``TYPE_CHECKING``) and imports it on first access, so at run time it too imports the kernel alone.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "kernel": "desched",
    "linter": "desched.linter",
    "webhook": "desched.webhook",
    "executor": "desched.executor",
}
HEAVY = ("kubernetes", "fastapi", "uvicorn", "cryptography", "jsonschema", "ruamel", "starlette", "pydantic")
LINTER_COMMANDS = ("desched.linter.command", "desched.linter.scope")

PROBE = """
import sys, io
from desched.cli import main
sys.stdout = io.StringIO()
code = main(["lint", "--format", "json", "--format", "sarif", "--format", "junit", "--format", "github",
             "--format", "text", "examples"])
sys.stdout = sys.__stdout__
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
print(code, ",".join(heavy))
"""


def _modules() -> dict[str, Path]:
    """Every product module's dotted name and file."""
    found: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _type_checking_imports(tree: ast.Module) -> set[int]:
    """``id()`` of every import node under an ``if TYPE_CHECKING:`` block."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for inner in ast.walk(node)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    }


def _imports(name: str, path: Path, runtime_only: bool = False) -> set[str]:
    """The desched modules ``name`` imports, anywhere in the file (function-level imports included; with
    ``runtime_only``, not those under ``TYPE_CHECKING``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_imports(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return {module for module in found if module == "desched" or module.startswith("desched.")}


def _layer(module: str) -> str:
    for layer in ("linter", "webhook", "executor"):
        if module == f"desched.{layer}" or module.startswith(f"desched.{layer}."):
            return layer
    return "kernel"


ALLOWED = {
    "kernel": {"kernel"},
    "linter": {"kernel", "linter"},
    "webhook": {"kernel", "linter", "webhook"},
    "executor": {"kernel", "linter", "executor"},
}


def test_the_graph_is_read_from_every_module():
    assert len(MODULES) > 100
    edges = {name: _imports(name, path) for name, path in MODULES.items()}
    assert "desched.linter.engine" in edges["desched.webhook.review"]
    assert "desched.documents" in edges["desched.linter.engine"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_one_way(name: str):
    layer = _layer(name)
    imports = _imports(name, MODULES[name], runtime_only=name == "desched")
    wrong = sorted(target for target in imports if _layer(target) not in ALLOWED[layer])
    assert not wrong, f"{name} ({layer}) imports {wrong}"
    if layer in ("webhook", "executor"):
        commands = sorted(target for target in _imports(name, MODULES[name]) if target.startswith(LINTER_COMMANDS))
        assert not commands, f"{name} imports the linter's command modules {commands}"
        assert "desched.cli" not in _imports(name, MODULES[name])
        private = sorted(target for target in _imports(name, MODULES[name]) if _private_of_another_layer(target, layer))
        assert not private, f"{name} imports private modules of another layer {private}"


def _private_of_another_layer(module: str, layer: str) -> bool:
    """Whether ``module`` is private (a ``_`` part) and lives in a layer other than ``layer``."""
    return _layer(module) != layer and any(part.startswith("_") for part in module.split(".")[1:])


def test_a_violation_is_detected(tmp_path):
    """The checker itself: a kernel module importing the linter is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from desched.linter import engine\n    from .sources import read_text\n")
    imports = _imports("desched.bad", bad)
    assert imports == {"desched.linter", "desched.linter.engine", "desched.sources"}
    face = tmp_path / "face.py"
    face.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from desched.linter import engine\n")
    assert _imports("desched.face", face) == {"desched.linter", "desched.linter.engine"}
    assert _imports("desched.face", face, runtime_only=True) == set()
    assert _layer("desched.linter.engine") not in ALLOWED["kernel"]
    assert _private_of_another_layer("desched.linter.rules._base", "webhook")
    assert not _private_of_another_layer("desched.linter.inventory", "webhook")
    assert not _private_of_another_layer("desched.executor._x", "executor")


def test_lint_imports_no_heavy_library():
    proc = subprocess.run([sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    code, heavy = proc.stdout.split(" ", 1)
    assert code == "1"
    assert heavy.strip() == "", f"the lint path imported {heavy.strip()}"


def test_lint_never_loads_the_webhook_or_executor():
    code = "import sys; from desched.cli import main; main(['lint', 'examples/good']); print(sorted(sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    loaded = proc.stdout.strip().splitlines()[-1]
    assert "desched.linter.engine" in loaded
    assert "desched.webhook" not in loaded and "desched.executor" not in loaded, loaded
    assert os.path.isdir(ROOT / "kernel")
