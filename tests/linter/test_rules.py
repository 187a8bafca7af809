"""Every rule: complete metadata, a registry entry, and examples that behave as labelled."""

from __future__ import annotations

import os
import re

import pytest

from desched import versions
from desched.linter import rules
from desched.linter.docs import _examples, render_markdown
from tests.conftest import lint

RULES = rules.all_rules()
EXAMPLES = [
    pytest.param(module, verdict, text, target, kubernetes, id=f"{module.ID}-{verdict}-{index}")
    for module in RULES
    for verdict, items in _examples(module).items()
    for index, (text, target, kubernetes) in enumerate(items)
]
PARAMETERS = ("module", "verdict", "text", "target", "kubernetes")


def _lint(text, target, kubernetes):
    """An example's findings, linted for its target release and, when it names one, its cluster's Kubernetes."""
    return lint(text, target, kubernetes=versions.parse_kubernetes(kubernetes) if kubernetes else None)


def test_every_module_in_the_folder_is_registered():
    folder = os.path.dirname(rules.__file__)
    on_disk = {name[:-3] for name in os.listdir(folder) if re.match(r"ds\d{3}_\w+\.py$", name)}
    assert on_disk == set(rules._MODULES)


def test_catalogue_ids_are_present():
    expected = {
        "DS001", "DS002", "DS003", "DS004", "DS005", "DS006", "DS201", "DS202", "DS203", "DS204", "DS205", "DS206",
        "DS207", "DS208", "DS301", "DS302", "DS303", "DS304", "DS305", "DS306", "DS307", "DS308", "DS309", "DS310",
        "DS311",
    }  # fmt: skip
    assert expected <= {module.ID for module in RULES}


@pytest.mark.parametrize("module", RULES, ids=lambda m: m.ID)
def test_metadata_is_complete(module):
    assert re.fullmatch(r"DS\d{3}", module.ID)
    assert module.ID not in rules.RETIRED
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", module.NAME)
    assert module.SEVERITY in ("error", "warning", "info")
    assert module.SUMMARY and not module.SUMMARY.endswith(".")
    assert len(module.RATIONALE) > 60
    assert module.REMEDIATION.endswith(".")
    assert module.SCOPE in ("file", "policy", "profile", "pluginConfig", "repository")
    assert module.EXAMPLES.get("pass") and module.EXAMPLES.get("fail")
    assert module.__doc__ and module.__doc__.startswith(module.ID)
    assert callable(module.check)


def test_ids_and_names_are_unique():
    assert len({m.ID for m in RULES}) == len(RULES)
    assert len({m.NAME for m in RULES}) == len(RULES)


def test_resolve_by_id_and_name():
    assert rules.resolve("ds302") == "DS302"
    assert rules.resolve("threshold-range") == "DS302"
    with pytest.raises(KeyError, match="no such rule"):
        rules.resolve("DS999")


@pytest.mark.parametrize(PARAMETERS, EXAMPLES)
def test_examples_behave_as_labelled(module, verdict, text, target, kubernetes):
    found = [f for f in _lint(text, target, kubernetes) if f.rule == module.ID]
    if verdict == "fail":
        assert found, f"{module.ID} should report this example"
        for finding in found:
            assert finding.line >= 1 and finding.column >= 1
    else:
        assert not found, f"{module.ID} should not report: {found}"


@pytest.mark.parametrize(PARAMETERS, [p for p in EXAMPLES if p.values[1] == "pass"])
def test_pass_examples_have_no_errors_at_all(module, verdict, text, target, kubernetes):
    errors = [f for f in _lint(text, target, kubernetes) if f.severity == "error"]
    assert not errors


def test_docs_rules_md_is_current():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "rules.md")
    with open(path, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == render_markdown(), "docs/rules.md is stale: run `python -m desched.linter.docs > docs/rules.md`"
