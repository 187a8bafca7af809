"""Rules declare what they run on and what they report; the engine selects by that metadata, never by rule IDs."""

from __future__ import annotations

import io
import json
from types import ModuleType, SimpleNamespace

import pytest

from desched import versions
from desched.cli import main
from desched.gitops.wrappers import object_label
from desched.linter import rules
from desched.linter.docs import _examples
from desched.linter.engine import Settings, deployment_findings, lint_repository, lint_text
from desched.linter.rules._base import DOCUMENT_KINDS, DocumentKind
from desched.openshift.validate import REFUSED, Category
from desched.validation.core import CODES
from desched.workloads.model import WORKLOAD_KINDS

ALL = [module.ID for module in rules.all_rules()]


def _ids(*ranges: tuple[int, int]) -> set[str]:
    return {rule for rule in ALL if any(low <= int(rule[2:]) <= high for low, high in ranges)}


# What each kind of document ran before the metadata existed (ID prefixes and hand lists in the engine), kept as the
# expected table. On a plain policy the engine used to run every document rule, including DS001 and DS501-DS504,
# which yield nothing there: the metadata leaves them out.
EXPECTED = {
    DocumentKind.FILE: {"DS001"},
    DocumentKind.POLICY: _ids((2, 9), (100, 399)) | {"DS013", "DS613", "DS615"},
    DocumentKind.CONVERTED: _ids((200, 399)),
    DocumentKind.RENDERED: _ids((200, 399)) | {"DS005"},  # plugin names, checked against OpenShift's build
    DocumentKind.KUBEDESCHEDULER: {"DS210", "DS501", "DS502", "DS503", "DS504"},
    DocumentKind.REPOSITORY: _ids((400, 499)) | {"DS505"},
    DocumentKind.DEPLOYMENT: _ids((600, 699)) - {"DS613", "DS615"},
    DocumentKind.UNITS: _ids((700, 799)),
    DocumentKind.DELIVERY: {"DS010", "DS011", "DS012", "DS014"},  # how the files reach a cluster (issue 37)
}


@pytest.mark.parametrize("module", rules.all_rules(), ids=lambda module: module.ID)
def test_every_rule_declares_the_kinds_it_runs_on(module: ModuleType):
    assert module.RUNS_ON and module.RUNS_ON <= DOCUMENT_KINDS
    across_files = module.RUNS_ON in (
        {DocumentKind.REPOSITORY},
        {DocumentKind.DEPLOYMENT},
        {DocumentKind.UNITS},
        {DocumentKind.DELIVERY},
    )
    assert (module.SCOPE == "repository") == across_files


@pytest.mark.parametrize("kind", sorted(DOCUMENT_KINDS))
def test_the_engine_selects_by_kind(kind: str):
    assert {module.ID for module in Settings().enabled_rules(kind)} == EXPECTED[kind]
    disabled = sorted(EXPECTED[kind])[:1]
    assert {module.ID for module in Settings(disabled=set(disabled)).enabled_rules(kind)} == EXPECTED[kind] - set(
        disabled
    )


# The rules the admission webhook applies: DS401-DS406 against the active policy and the cluster's objects, and the
# deployment rules that need nothing but the admitted workload (not DS609, which needs the RBAC objects).
ADMISSION = _ids((401, 406)) | {
    "DS601", "DS602", "DS603", "DS604", "DS605", "DS606", "DS607", "DS610", "DS611", "DS612", "DS614", "DS616",
}  # fmt: skip


def test_admission_rules_are_repository_or_deployment_rules():
    admitted = rules.admission_rules()
    assert {module.ID for module in admitted} == ADMISSION
    assert all(module.RUNS_ON in ({DocumentKind.REPOSITORY}, {DocumentKind.DEPLOYMENT}) for module in admitted)


ALONE = [
    pytest.param(module, text, target, kubernetes, id=f"{module.ID}-{verdict}-{index}")
    for module in rules.admission_rules()
    if DocumentKind.DEPLOYMENT in module.RUNS_ON
    for verdict, items in _examples(module).items()
    for index, (text, target, kubernetes) in enumerate(items)
]


@pytest.mark.parametrize(("module", "text", "target", "kubernetes"), ALONE)
def test_an_admission_deployment_rule_judges_each_workload_alone_as_in_its_whole_example(
    module: ModuleType, text: str, target: str | None, kubernetes: str | None
):
    """What an admission rule finds in a workload alone, it finds in the whole example too (it may find more there,
    in what the other objects show: DS607's key missing from the ConfigMap); DS609 would say "no RBAC" alone."""
    chosen = Settings(
        target=versions.parse(target) if target else None,
        kubernetes=versions.parse_kubernetes(kubernetes) if kubernetes else None,
    )
    result = lint_text("example.yaml", text, chosen)
    workloads = [json.loads(json.dumps(doc)) for doc in result.others if doc.get("kind") in WORKLOAD_KINDS]
    labels = {object_label(doc, doc["kind"]) for doc in workloads}

    def seen(findings: list) -> set[tuple[str, str, str]]:
        return {(f.object, f.severity, f.message) for f in findings if f.rule == module.ID and f.object in labels}

    alone = set().union(*(seen(deployment_findings("example.yaml", doc, chosen)) for doc in workloads))
    assert alone <= seen(lint_repository([result], chosen))


def _partition_problems(owners: dict[str, frozenset[str]], codes: tuple[str, ...]) -> list[str]:
    """Why ``owners`` (rule -> validation codes it reports) is not a partition of ``codes``; empty when it is."""
    found: list[str] = []
    for code in codes:
        claimed = sorted(rule for rule, owned in owners.items() if code in owned)
        if len(claimed) != 1:
            found.append(f"{code}: {claimed or 'nobody'}")
    found.extend(
        f"{rule}: unknown {sorted(owned - set(codes))}" for rule, owned in owners.items() if owned - set(codes)
    )
    return found


def test_every_validation_code_is_reported_by_exactly_one_rule():
    owners = {module.ID: module.VALIDATION_CODES for module in rules.all_rules() if hasattr(module, "VALIDATION_CODES")}
    assert _partition_problems(owners, CODES) == []
    assert owners["DS301"] == {"other"}


def test_the_partition_check_finds_gaps_and_overlaps():
    assert _partition_problems({"A": frozenset({"x"}), "B": frozenset({"x", "z"})}, ("x", "y")) == [
        "x: ['A', 'B']",
        "y: nobody",
        "B: unknown ['z']",
    ]


def test_every_openshift_category_is_reported_by_exactly_one_rule():
    reported = [module.OPENSHIFT_CATEGORY for module in rules.all_rules() if hasattr(module, "OPENSHIFT_CATEGORY")]
    categories = {value for key, value in vars(Category).items() if key.isupper()}
    assert sorted(reported) == sorted(categories)
    refusing = {module.ID for module in rules.all_rules() if getattr(module, "OPENSHIFT_CATEGORY", None) in REFUSED}
    assert refusing == {"DS501", "DS502"}


@pytest.mark.parametrize(
    ("config", "options", "expected"),
    [
        (None, [], [("DS001", "error")]),
        ("rules: {DS001: warning}\n", [], [("DS001", "warning")]),
        ("rules: {DS001: disable}\n", [], []),
        (None, ["--disable", "DS001"], []),
    ],
    ids=["default", "severity", "configured-off", "option-off"],
)
def test_ds001_on_stdin_honours_severity_and_disable(tmp_path, monkeypatch, capsys, config, options, expected):
    monkeypatch.chdir(tmp_path)
    if config is not None:
        (tmp_path / ".desched.yaml").write_text(config)
    monkeypatch.setattr("sys.stdin", SimpleNamespace(buffer=io.BytesIO(b"\x00\x01binary")))
    main(["lint", "--format", "json", *options, "-"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(finding["rule"], finding["severity"]) for finding in findings] == expected


def test_the_parts_a_rule_reads_of_a_remote_base_patch_are_parts_a_patch_can_set():
    from desched.deployment.repository import PATCH_PARTS

    declared = {module.ID: module.PATCH_READS for module in rules.all_rules() if hasattr(module, "PATCH_READS")}
    assert declared and all(parts and parts <= PATCH_PARTS.keys() for parts in declared.values())
    assert all(DocumentKind.DEPLOYMENT in rules.get(rule).RUNS_ON for rule in declared)
