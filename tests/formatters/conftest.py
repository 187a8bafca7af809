"""Golden-file support for the formatter tests.

The default run compares each formatter's output with ``golden/<case>.<format file>``. To rewrite the goldens after
an intended change, run ``pytest tests/formatters --update-goldens`` (pytest only knows the option when this
directory is named on the command line) or ``DESCHED_UPDATE_GOLDENS=1 pytest tests/formatters``, then review the
diff.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    with contextlib.suppress(ValueError):  # ValueError: a conftest higher up already offers the option
        parser.addoption(
            "--update-goldens",
            action="store_true",
            default=False,
            help="rewrite tests/formatters/golden/* from the current formatter output instead of comparing",
        )


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("update_goldens", default=False)) or os.environ.get("DESCHED_UPDATE_GOLDENS") == "1"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """``golden(name, actual)``: assert that ``actual`` equals the golden file ``name`` (or rewrite it)."""
    update = _updating(request.config)

    def check(name: str, actual: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(actual.encode("utf-8"))
            return
        if not path.exists():
            pytest.fail(f"missing golden file {path}; run `pytest tests/formatters --update-goldens` and review it")
        expected = path.read_bytes().decode("utf-8")
        assert actual == expected, f"output differs from {path}; if intended, rerun with --update-goldens"

    return check
