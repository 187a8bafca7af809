"""The inventory API (:mod:`desched.linter.inventory`, :func:`desched.linter.engine.check_inventory`): the repository
rules over policies and objects held in memory, as the admission webhook calls them, agree with ``desched lint`` over
the same objects in files, and ``focus`` picks findings by their subject, whatever the objects' sources are named."""

from __future__ import annotations

import yaml

from desched.linter.engine import Settings, check_inventory, lint_repository, lint_text
from desched.linter.inventory import CheckedPolicy, Repository, policy_groups
from desched.linter.rules._workload_examples import POLICY, deployment, pdb
from desched.workloads import collect

# web: 3 replicas, no PDB (DS401); api: 2 replicas under a PDB allowing no disruption (DS402 on the PDB); one: a
# single replica (DS404).
OBJECTS = deployment("web", 3) + deployment("api", 2) + pdb("api", "api", "minAvailable: 100%") + deployment("one", 1)
SECOND_POLICY = POLICY.replace("name: default", "name: other")


def _linted(text: str) -> tuple[Settings, list[CheckedPolicy]]:
    settings = Settings()
    return settings, lint_text("policy.yaml", text, settings).runs()


def _repository(source: str) -> tuple[Repository, Settings]:
    settings, runs = _linted(POLICY)
    objects = [(source, obj) for obj in yaml.safe_load_all(OBJECTS) if obj]
    return Repository.of(runs, objects), settings


def test_check_inventory_finds_what_lint_finds_in_files() -> None:
    settings = Settings()
    result = lint_text("all.yaml", POLICY + OBJECTS, settings)
    in_files = {(f.rule, f.object) for f in lint_repository([result], settings)}
    repo, settings = _repository("memory")
    in_memory = {(f.rule, f.object) for f in check_inventory(repo, settings)}
    assert in_memory == in_files
    assert {rule for rule, _ in in_memory} >= {"DS401", "DS402", "DS404"}


def test_focus_keeps_the_findings_about_its_subjects_only() -> None:
    repo, settings = _repository("cluster")
    web = next(w for w in repo.inventory.workloads if w.name == "web")
    budget = repo.inventory.pdbs[0]
    assert {(f.rule, f.object) for f in check_inventory(repo, settings, focus=[web])} == {
        ("DS401", "Deployment shop/web")
    }
    assert {(f.rule, f.object) for f in check_inventory(repo, settings, focus=[budget])} == {
        ("DS402", "PodDisruptionBudget shop/api")
    }
    assert check_inventory(repo, settings, focus=[]) == []


def test_focus_does_not_route_by_source_name() -> None:
    """Every object under one source name: the subject alone decides (the webhook's cache and request may share it)."""
    repo, settings = _repository("same")
    one = next(w for w in repo.inventory.workloads if w.name == "one")
    assert [f.rule for f in check_inventory(repo, settings, focus=[one])] == ["DS404"]


def test_policies_that_evict_alike_are_one_group_evaluated_once() -> None:
    _, runs = _linted(POLICY + "---\n" + SECOND_POLICY)
    inventory = collect([("memory", obj) for obj in yaml.safe_load_all(OBJECTS) if obj])
    groups = policy_groups(runs, inventory)
    assert [len(group.docs) for group in groups] == [2]
    repo = Repository(runs, inventory, groups=groups)
    assert len(repo.analyses()) == 1
    assert "and 1 more with the same scope" in repo.analyses()[0].label()


def test_compiled_groups_give_the_decisions_of_groups_compiled_by_the_repository() -> None:
    """The webhook compiles groups once per policy change; a repository given them decides as one that compiles."""
    settings, runs = _linted(POLICY)
    inventory = collect([("memory", obj) for obj in yaml.safe_load_all(OBJECTS) if obj])
    given = Repository(runs, inventory, groups=policy_groups(runs, inventory))
    compiled = Repository(runs, inventory)
    assert check_inventory(given, settings) == check_inventory(compiled, settings)
