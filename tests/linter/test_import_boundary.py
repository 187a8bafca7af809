"""The import graph points one way, and the lint path stays light: pre-commit runs it on every commit.

Every module lives in a room: a subpackage of ``desched`` (``desched.gitops``, ``desched.linter``, ...) or, for the
few modules of the package root, the module itself. The rooms stand on floors (:data:`FLOORS`, bottom up, as
docs/architecture.md draws them), and a module imports only its own room and rooms on lower floors, under
``TYPE_CHECKING`` and inside functions too; no two files import each other, even through others. ``desched.webhook``
and ``desched.executor`` never import each other nor a command module of the linter. ``desched.cli`` reaches
commands by name (``module:attribute``), never by import; the package face ``desched`` names the linter's library
surface for type checkers only and imports it on first access, and ``desched.policy.effective`` reaches the
OpenShift renderer and the v1alpha1 converter by name the same way.
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
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(MODULES)
            found.update(submodules)
            if len(submodules) < len(node.names):  # a name defined in ``base`` itself
                found.add(base)
    return {module for module in found if module == "desched" or module.startswith("desched.")}


#: The rooms, floor by floor from the ground up; a room on floor N may import the rooms of floors below N only.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors", "tree", "version", "patterns"),
    ("versions", "extras", "goduration"),
    ("runtime",),  # the kube client, TLS, metrics, JSON output, the garbage collector
    ("reading",),  # files, YAML with positions
    ("chart", "validation", "api"),  # the chart as data; upstream's validators; the policy API's types
    ("gitops", "plugins"),  # where policies live in a repository; the plugins and their registry
    ("policy",),  # the typed and effective policy, the structure checker, the schemas
    ("workloads", "openshift"),  # the eviction scope model; the KubeDescheduler operator
    ("deployment",),  # what runs the descheduler: workloads, chart renders, releases, RBAC
    ("migrate", "render"),  # v1alpha1 -> v1alpha2, files rewritten in place; what operator and chart render
    ("linter",),
    ("webhook", "executor"),
    ("cli", "desched"),  # the command line and the package face
    ("__main__",),
)
FLOOR = {room: floor for floor, rooms in enumerate(FLOORS) for room in rooms}


def _room(module: str) -> str:
    """The room of a module: its subpackage of ``desched``, the module itself at the package root, or ``desched``
    for the package face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "desched"


def _layer(module: str) -> str:
    room = _room(module)
    return room if room in ("linter", "webhook", "executor") else "kernel"


def test_the_graph_is_read_from_every_module():
    assert len(MODULES) > 100
    edges = {name: _imports(name, path) for name, path in MODULES.items()}
    assert "desched.linter.engine" in edges["desched.webhook.review"]
    assert "desched.gitops.documents" in edges["desched.linter.engine"]


def test_every_room_stands_on_a_floor():
    rooms = {_room(name) for name in MODULES}
    assert rooms == set(FLOOR), f"rooms without a floor {sorted(rooms - set(FLOOR))}, floors without a room " + str(
        sorted(set(FLOOR) - rooms)
    )


def test_the_package_root_holds_few_modules():
    root = [path.name for path in (ROOT / "kernel").glob("*.py")]
    assert len(root) <= 10, sorted(root)


def _downward(name: str, target: str) -> bool:
    """Whether ``name`` may import ``target``: the same room, or a room on a lower floor."""
    return _room(name) == _room(target) or FLOOR[_room(target)] < FLOOR[_room(name)]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down_the_floors(name: str):
    layer = _layer(name)
    imports = _imports(name, MODULES[name], runtime_only=name == "desched")
    wrong = sorted(target for target in imports if not _downward(name, target))
    assert not wrong, f"{name} (room {_room(name)}, floor {FLOOR[_room(name)]}) imports {wrong}"
    if layer in ("webhook", "executor"):
        commands = sorted(target for target in _imports(name, MODULES[name]) if target.startswith(LINTER_COMMANDS))
        assert not commands, f"{name} imports the linter's command modules {commands}"
        assert "desched.cli" not in _imports(name, MODULES[name])
        private = sorted(target for target in _imports(name, MODULES[name]) if _private_of_another_layer(target, layer))
        assert not private, f"{name} imports private modules of another layer {private}"


def _private_of_another_layer(module: str, layer: str) -> bool:
    """Whether ``module`` is private (a ``_`` part) and lives in a layer other than ``layer``."""
    return _layer(module) != layer and any(part.startswith("_") for part in module.split(".")[1:])


def _circles() -> list[list[str]]:
    """The sets of modules that import each other, through any number of others (Tarjan's strongly connected
    components of more than one module; the package face's ``TYPE_CHECKING`` names left out)."""
    edges = {
        name: _imports(name, path, runtime_only=name == "desched") & set(MODULES) for name, path in MODULES.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in edges[name] - {name}:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = [stack.pop()]
            while component[-1] != name:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return found


def test_no_files_import_each_other():
    assert _circles() == []


def _declares_named_tuple(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("NamedTuple") for base in node.bases)
        for node in ast.walk(tree)
    )


def test_named_tuples_are_declared_without_postponed_annotations():
    """typing.NamedTuple compiles every string annotation of its fields (a ForwardRef each), which postponed
    annotations make of all of them; the kernel's and the linter's modules that declare one write only what needs it
    as a string. A lint, the pre-commit case's included, builds dozens of them."""
    postponed = sorted(
        name
        for name, path in MODULES.items()
        if _layer(name) in ("kernel", "linter")
        and "from __future__ import annotations" in (text := path.read_text(encoding="utf-8"))
        and _declares_named_tuple(ast.parse(text))
    )
    assert postponed == []


def test_a_violation_is_detected(tmp_path):
    """The checker itself: a module importing a room above it, or the linter from below, is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from desched.linter import engine\n    from .sources import read_text\n")
    imports = _imports("desched.bad", bad)
    assert imports == {"desched.linter.engine", "desched.sources"}
    assert not _downward("desched.gitops.documents", "desched.deployment.releases")
    assert not _downward("desched.policy.effective", "desched.migrate.convert")
    assert _downward("desched.deployment.releases", "desched.gitops.documents")
    assert _downward("desched.deployment.releases", "desched.deployment.runs")
    face = tmp_path / "face.py"
    face.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from desched.linter import engine\n")
    assert _imports("desched.face", face) == {"desched.linter.engine"}
    assert _imports("desched.face", face, runtime_only=True) == set()
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


#: What a plain policy file never needs: the chart model and renders, the deployment and GitOps unit models (in a
#: repository, only the index of its structure, desched.gitops.context, is read), the OpenShift operator, templates,
#: the repository, deployment and delivery rules, the structured output formats, and PyYAML itself (the fast scanner
#: reads plain YAML). The pre-commit hook runs ``desched lint FILE`` on every commit.
NOT_FOR_A_PLAIN_POLICY = (
    "yaml",
    "json",
    "desched.chart",
    "desched.deployment.chartrender",
    "desched.deployment.repository",
    "desched.deployment.delivery",
    "desched.gitops.units",
    "desched.gitops.patches",
    "desched.gitops.umbrella",
    "desched.openshift",
    "desched.render",
    "desched.migrate",
    "desched.workloads",
    "desched.linter.templates",
    "desched.linter.inventory",
    "desched.linter.formatters.json_",
    "desched.linter.formatters.sarif",
)
STARTUP_PROBE = """
import sys
from desched.cli import main
code = main(["lint", sys.argv[1]])
print(code, " ".join(sorted(sys.modules)))
"""


def test_a_plain_policy_file_loads_only_what_it_needs(tmp_path):
    """The start-up of the pre-commit case, as behaviour (timings live in bench/lint.py): ``desched lint FILE`` on a
    plain policy in a repository of its own loads none of :data:`NOT_FOR_A_PLAIN_POLICY`, only the policy rules, and
    only the modules of the plugins it names."""
    from desched import plugins
    from desched.linter import rules

    (tmp_path / ".git").mkdir()  # in a repository, as pre-commit runs it: context discovery runs, and finds nothing
    policy = tmp_path / "policy.yaml"
    policy.write_text((ROOT / "examples/good/policy.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE, str(policy)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    code, loaded = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    modules = set(loaded.split())
    assert code == "0" and "desched.linter.engine" in modules
    heavy = sorted(m for m in modules if m.startswith(NOT_FOR_A_PLAIN_POLICY))
    assert heavy == [], f"a plain policy file loaded {heavy}"
    policy_rules = {module.__name__ for module in rules.rules_for("policy")}
    loaded_rules = {m for m in modules if m.startswith("desched.linter.rules.ds")}
    assert loaded_rules == policy_rules
    # The plugin modules are those of the plugins the policy names (it configures DefaultEvictor), no others.
    named = {"DefaultEvictor", "RemoveDuplicates", "RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"}
    named |= {"RemovePodsHavingTooManyRestarts", "RemovePodsViolatingNodeAffinity"}
    assert set(policy.read_text(encoding="utf-8").split()) >= named
    loaded_plugins = {m for m in modules if m.startswith("desched.plugins.")} - {"desched.plugins.base"}
    assert loaded_plugins - {"desched.plugins.openshift"} == {plugins._UPSTREAM_MODULES[name] for name in named}
