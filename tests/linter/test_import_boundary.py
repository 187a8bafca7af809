"""The lint path stays light: pre-commit runs it on every commit."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEAVY = ("kubernetes", "fastapi", "uvicorn", "cryptography", "jsonschema", "ruamel", "starlette", "pydantic")

PROBE = """
import sys, io
from linter.cli import main
sys.stdout = io.StringIO()
code = main(["lint", "--format", "json", "--format", "sarif", "--format", "junit", "--format", "github",
             "--format", "text", "examples"])
sys.stdout = sys.__stdout__
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
print(code, ",".join(heavy))
"""


def test_lint_imports_no_heavy_library():
    proc = subprocess.run([sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    code, heavy = proc.stdout.split(" ", 1)
    assert code == "1"
    assert heavy.strip() == "", f"the lint path imported {heavy.strip()}"


def test_webhook_and_executor_packages_never_imported_by_linter():
    for folder, _, files in os.walk(os.path.join(ROOT, "linter")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    text = handle.read()
                assert "import webhook" not in text and "from webhook" not in text
                assert "import executor" not in text and "from executor" not in text
