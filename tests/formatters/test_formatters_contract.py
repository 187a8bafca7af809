"""What every formatter module promises: the registry, cheap imports, and goldens that survive git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from desched.linter.formatters import FORMATTERS, get

from .conftest import GOLDEN_DIR

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(FORMATTERS))
def test_every_format_has_a_render_function(name):
    assert callable(get(name))


@pytest.mark.parametrize("name", sorted(FORMATTERS))
def test_modules_state_their_contract(name):
    module = sys.modules[get(name).__module__]
    assert module.__doc__ and "Contract" in module.__doc__
    assert module.__file__
    source = Path(module.__file__).read_text(encoding="utf-8")
    assert "from __future__ import annotations" in source


def test_imports_stay_cheap():
    """Only the formats that write JSON import ``json``; none imports anything outside the standard library."""
    code = (
        "import sys; before = set(sys.modules)\n"
        "import desched.linter.formatters.text, desched.linter.formatters.github, desched.linter.formatters.junit\n"
        "print('json' in set(sys.modules) - before)\n"
        "import desched.linter.formatters.json_, desched.linter.formatters.sarif\n"
        "new = set(sys.modules) - before\n"
        "tops = {m.split('.')[0] for m in new}\n"
        "print(sorted(tops - set(sys.stdlib_module_names) - {'desched'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["False", "[]"]


def test_goldens_have_no_carriage_returns_or_trailing_spaces():
    files = sorted(GOLDEN_DIR.iterdir())
    assert files
    for path in files:
        data = path.read_bytes()
        assert b"\r" not in data, path
        assert all(not line.endswith((b" ", b"\t")) for line in data.split(b"\n")), path
