"""Every rule: complete metadata, a registry entry, and examples that behave as labelled."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from desched import versions
from desched.linter import rules
from desched.linter.docs import (
    CATALOGUE_END,
    CATALOGUE_START,
    _examples,
    main,
    outputs,
    render_deployment_catalogue,
    with_deployment_catalogue,
)
from desched.linter.rules._base import DOCUMENT_KINDS
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


def test_the_registry_lists_the_kinds_each_rule_runs_on():
    """rules_for(kind) imports only the modules the registry lists for ``kind``: the list is each module's RUNS_ON,
    and rules_for answers what all_rules() filtered by RUNS_ON would."""
    modules = {module.__name__.rpartition(".")[2]: module for module in rules.all_rules()}
    for name, kinds in rules._MODULES.items():
        assert set(kinds.split()) == set(modules[name].RUNS_ON), name
    for kind in DOCUMENT_KINDS:
        assert rules.rules_for(kind) == [module for module in rules.all_rules() if kind in module.RUNS_ON], kind


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


@pytest.mark.parametrize("module", [m for m in RULES if m.ID.startswith("DS6")], ids=lambda m: m.ID)
def test_a_ds6xx_rule_whose_examples_take_another_severity_says_when(module):
    """The DS6xx catalogue of docs/deployment-rules.md gives each rule's severities from its metadata alone."""
    severities = {
        finding.severity
        for items in _examples(module).values()
        for text, target, kubernetes in items
        for finding in _lint(text, target, kubernetes)
        if finding.rule == module.ID
    }
    if severities - {module.SEVERITY}:
        assert getattr(module, "SEVERITY_NOTE", None), f"{module.ID} yields {sorted(severities)}: say when"


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


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", ["rules.md", "deployment-rules.md"])
def test_generated_docs_are_current(name):
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == outputs(DOCS)[name], f"docs/{name} is stale: run `python -m desched.linter.docs --out docs`"


def test_the_deployment_catalogue_is_generated_between_its_markers_only():
    text = f"prose\n{CATALOGUE_START}\n| DS601 | edited by hand |\n{CATALOGUE_END}\nmore prose\n"
    expected = f"prose\n{CATALOGUE_START}\n\n{render_deployment_catalogue()}\n{CATALOGUE_END}\nmore prose\n"
    assert with_deployment_catalogue(text) == expected
    assert with_deployment_catalogue(expected) == expected
    with pytest.raises(ValueError, match="markers are missing"):
        with_deployment_catalogue(f"prose\n{CATALOGUE_START}\n")


def test_the_catalogue_lists_the_ds6xx_rules_with_their_severities():
    rows = render_deployment_catalogue().splitlines()[2:]
    assert [row.split("]")[0] for row in rows] == [f"| [{m.ID}" for m in RULES if m.ID.startswith("DS6")]
    (ds603,) = [row for row in rows if row.startswith("| [DS603]")]
    assert "| warning; error with several replicas (they all run) | yes |" in ds603


def test_the_command_writes_both_documents(tmp_path):
    (tmp_path / "deployment-rules.md").write_text(f"prose\n{CATALOGUE_START}\n{CATALOGUE_END}\n", encoding="utf-8")
    assert main(["--out", str(tmp_path)]) == 0
    expected = outputs(tmp_path)
    assert {name: (tmp_path / name).read_text(encoding="utf-8") for name in expected} == expected
