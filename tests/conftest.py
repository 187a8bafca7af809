"""Shared test helpers: lint a YAML string in-process."""

from __future__ import annotations

import pytest

from desched import versions
from desched.linter.engine import Settings, lint_repository, lint_text
from desched.linter.finding import Finding

pytest_plugins = ["tests.kcp.fixtures"]


def lint(text: str, target: str | None = None, file: str = "policy.yaml", **settings: object) -> list[Finding]:
    """Findings of ``text`` linted as ``file`` for ``target`` (default: the release the text deploys, else the
    newest)."""
    chosen = Settings(target=versions.parse(target) if target else None)._replace(**settings)
    result = lint_text(file, text, chosen)
    return result.findings + lint_repository([result], chosen)


@pytest.fixture
def lint_yaml():
    return lint
