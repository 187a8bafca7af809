"""OpenShift's descheduler build (docs/openshift-operator.md#5-openshifts-descheduler-build): the plugin it registers
beyond upstream's, which policies are checked against it, and what ``desched render`` prints linting clean against
it for every profile combination the operator accepts."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from desched.errors import ConfigError
from desched.executor.defaultevictor import UnrunnablePolicy
from desched.executor.framework import prepare_policy
from desched.linter.config import load
from desched.linter.engine import Settings, lint_configmap_key
from desched.linter.finding import Finding
from desched.openshift import RenderError, render
from desched.openshift.model import KUBEVIRT, OPERATOR_NAMESPACE, PROFILES
from desched.plugins import DISTRIBUTIONS, OPENSHIFT, REGISTRY, UPSTREAM, elsewhere, validate_args
from desched.plugins.openshift import kubevirtmigrationaware
from desched.policy.model import decode
from desched.render.command import dump
from tests.conftest import lint

NAME = kubevirtmigrationaware.NAME
ONLY_OPENSHIFT = "exists only in OpenShift's descheduler build: lint with --distribution openshift"
REFUSED = "KubevirtMigrationAware exists only in OpenShift's descheduler build; desched cannot execute it"


def kubedescheduler(profiles: list[str], **customizations: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"mode": "Automatic", "deschedulingIntervalSeconds": 3600, "profiles": profiles}
    if customizations:
        spec["profileCustomizations"] = customizations
    metadata = {"name": "cluster", "namespace": OPERATOR_NAMESPACE}
    return {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler", "metadata": metadata, "spec": spec}


def configmap(policy: str, namespace: str = OPERATOR_NAMESPACE, name: str = "cluster", key: str = "policy.yaml") -> str:
    """``policy`` in a ConfigMap, as the operator writes it by default."""
    document = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    return yaml.safe_dump({**document, "data": {key: policy}})


KUBEVIRT_POLICY = dump(render(kubedescheduler(["KubeVirtRelieveAndMigrate"])).policy)


def rules(findings: list[Finding]) -> list[str]:
    return [finding.rule for finding in findings]


# --- the plugin ------------------------------------------------------------------------------------------------------


def test_only_openshift_registers_the_plugin():
    plugin = DISTRIBUTIONS[OPENSHIFT].plugins[NAME]
    assert NAME not in REGISTRY and elsewhere(NAME) is DISTRIBUTIONS[OPENSHIFT]
    assert elsewhere("PodLifeTime") is None and elsewhere("NoSuchPlugin") is None
    assert plugin.extension_points == ("filter", "preevictionfilter") and not plugin.evicts
    assert plugin.args.name == "KubevirtMigrationAwareArgs" and plugin.args.strict
    assert set(plugin.args.fields) == {
        "apiVersion", "kind", "migrationCooldown", "maxMigrationCooldown", "migrationHistoryWindow",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("args", "messages"),
    [
        ({}, []),
        ({"migrationCooldown": "-5m"}, ["migrationCooldown must be non-negative, got -5m0s"]),
        ({"maxMigrationCooldown": "-1h"}, ["maxMigrationCooldown must be non-negative, got -1h0m0s"]),
        (
            {"migrationCooldown": "7h", "maxMigrationCooldown": "90m"},
            ["maxMigrationCooldown (1h30m0s) must be >= migrationCooldown (7h0m0s)"],
        ),
        ({"migrationCooldown": "7h"}, []),  # validated as written: the 6h default comes later
        ({"migrationCooldown": "7h", "maxMigrationCooldown": "0s"}, []),
        ({"migrationHistoryWindow": "-1s"}, ["migrationHistoryWindow must be non-negative, got -1s"]),
        (
            {"migrationCooldown": "-1m", "migrationHistoryWindow": "-1s"},
            ["migrationCooldown must be non-negative, got -1m0s"],
        ),
        ({"migrationCooldown": "soon", "maxMigrationCooldown": 5}, []),  # DS004 reports what does not decode
    ],
)  # fmt: skip
def test_validation_is_the_builds_and_stops_at_the_first_error(args, messages):
    assert [error.message for error in validate_args(NAME, args, 36, OPENSHIFT)] == messages
    assert validate_args(NAME, args, 36, UPSTREAM) == []


def test_defaults_fill_zero_and_absent_durations():
    defaults = DISTRIBUTIONS[OPENSHIFT].plugins[NAME].defaults
    assert defaults({}) == {
        "migrationCooldown": "15m0s",
        "maxMigrationCooldown": "6h0m0s",
        "migrationHistoryWindow": "48h0m0s",
    }
    assert defaults({"migrationCooldown": "5m", "maxMigrationCooldown": "0s"}) == {
        "migrationCooldown": "5m",
        "maxMigrationCooldown": "6h0m0s",
        "migrationHistoryWindow": "48h0m0s",
    }


# --- which build a policy is checked against -------------------------------------------------------------------------


def test_upstream_names_the_plugin_as_openshifts_and_suggests_the_distribution():
    found = [f for f in lint(KUBEVIRT_POLICY) if f.rule == "DS005"]
    assert len(found) == 3  # the pluginConfig entry, and the filter and preEvictionFilter lists
    assert all(ONLY_OPENSHIFT in f.message for f in found), found
    assert "DS005" not in rules(lint(KUBEVIRT_POLICY, distribution=OPENSHIFT))


@pytest.mark.parametrize(
    ("where", "openshift"),
    [
        ({}, True),
        ({"namespace": "default"}, False),
        ({"name": "descheduler"}, False),
        ({"key": "other.yaml"}, False),
    ],
)
def test_the_operators_configmap_is_recognised_by_namespace_name_and_key(where, openshift):
    found = rules(lint(configmap(KUBEVIRT_POLICY, **where)))
    assert ("DS005" not in found) is openshift, found


def test_the_webhook_recognises_the_operators_configmap_key():
    """The webhook lints each data key on its own text (lint_configmap_key), naming the ConfigMap that holds it."""
    owner = f"ConfigMap {OPERATOR_NAMESPACE}/cluster"
    result = lint_configmap_key("data[policy.yaml]", KUBEVIRT_POLICY, "policy.yaml", owner, Settings())
    assert "DS005" not in rules(result.findings)
    result = lint_configmap_key(
        "data[policy.yaml]", KUBEVIRT_POLICY, "policy.yaml", "ConfigMap default/cluster", Settings()
    )
    assert "DS005" in rules(result.findings)


def test_an_explicit_distribution_wins_over_recognition():
    assert "DS005" in rules(lint(configmap(KUBEVIRT_POLICY), distribution=UPSTREAM))
    assert "DS005" not in rules(lint(configmap(KUBEVIRT_POLICY, namespace="default"), distribution=OPENSHIFT))


FILTERS = "    filter:\n      enabled:\n      - DefaultEvictor\n      - KubevirtMigrationAware\n"
PRE_EVICTION = "    preevictionfilter:\n      enabled:\n      - KubevirtMigrationAware\n"


@pytest.mark.parametrize(
    ("edits", "rule", "fragment"),
    [
        ([("args: {}", "args: {migrationCooldown: 5}")], "DS004", "must be a duration"),
        ([("args: {}", "args: {cooldown: 5m}")], "DS003", 'unknown field "cooldown"'),
        ([("args: {}", "args: {migrationCooldown: '-1m'}")], "DS301", "migrationCooldown must be non-negative"),
        ([("      - LowNodeUtilization", "      - LowNodeUtilization\n      - KubevirtMigrationAware")], "DS202",
         "KubevirtMigrationAware is a filter and preevictionfilter plugin"),
        ([("  - args: {}\n    name: KubevirtMigrationAware\n", "")], "DS203",
         'unable to find "KubevirtMigrationAware"'),
        ([(FILTERS, FILTERS.replace("      - KubevirtMigrationAware\n", "")), (PRE_EVICTION, "")], "DS204",
         "KubevirtMigrationAware, which is enabled nowhere"),
    ],
)  # fmt: skip
def test_openshift_checks_the_plugin_like_upstreams(edits, rule, fragment):
    policy = KUBEVIRT_POLICY
    for old, new in edits:
        assert old in policy
        policy = policy.replace(old, new)
    found = [f for f in lint(policy, distribution=OPENSHIFT) if f.rule == rule]
    assert found and all(fragment in f.message for f in found), lint(policy, distribution=OPENSHIFT)
    assert rule not in rules(lint(KUBEVIRT_POLICY, distribution=OPENSHIFT))


def test_a_kubedescheduler_rendering_is_checked_against_openshift():
    """The operator leaves the cooldown order unchecked; the build refuses the rendered policy (DS301 on the CR)."""
    text = yaml.safe_dump(
        kubedescheduler(["KubeVirtRelieveAndMigrate"], devMigrationCooldown="7h", devMaxMigrationCooldown="1h"),
        sort_keys=False,
    )
    found = [f for f in lint(text) if f.severity in ("error", "warning")]
    assert [(f.rule, f.path) for f in found] == [("DS301", "/spec/profileCustomizations/devMaxMigrationCooldown")]
    assert found[0].message == (
        "in the policy the operator renders: in profile KubeVirtRelieveAndMigrate: maxMigrationCooldown (1h0m0s) must "
        "be >= migrationCooldown (7h0m0s)"
    )


def test_configuration_and_command_line_choose_the_distribution(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(KUBEVIRT_POLICY)
    assert main(["lint", "--no-config", "policy.yaml"]) == 1
    assert ONLY_OPENSHIFT in capsys.readouterr().out
    assert main(["lint", "--no-config", "--distribution", "openshift", "policy.yaml"]) == 0
    (tmp_path / ".desched.yaml").write_text("distribution: openshift\n")
    assert load(str(tmp_path / ".desched.yaml")).distribution == OPENSHIFT
    assert main(["lint", "policy.yaml"]) == 0
    assert main(["lint", "--distribution", "upstream", "policy.yaml"]) == 1
    (tmp_path / ".desched.yaml").write_text("distribution: okd\n")
    with pytest.raises(ConfigError, match="distribution: expected one of upstream, openshift"):
        load(str(tmp_path / ".desched.yaml"))


# --- the executor runs upstream's plugins only -----------------------------------------------------------------------


def test_prepare_policy_refuses_an_openshift_only_plugin():
    with pytest.raises(UnrunnablePolicy, match=REFUSED):
        prepare_policy(decode(yaml.safe_load(KUBEVIRT_POLICY), registry=DISTRIBUTIONS[OPENSHIFT].plugins))


@pytest.mark.parametrize(
    "text",
    [configmap(KUBEVIRT_POLICY), KUBEVIRT_POLICY, yaml.safe_dump(kubedescheduler(["KubeVirtRelieveAndMigrate"]))],
    ids=["operator-configmap", "raw-policy", "kubedescheduler"],
)
def test_simulate_says_it_cannot_execute_the_plugin(tmp_path: Path, capsys, text: str):
    (tmp_path / "policy.yaml").write_text(text)
    (tmp_path / "cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    code = main(["simulate", "--policy", str(tmp_path / "policy.yaml"), "--cluster", str(tmp_path / "cluster.yaml")])
    err = capsys.readouterr().err
    assert (code, err.strip().splitlines()[-1]) == (2, f"desched: {REFUSED}"), err
    assert "Traceback" not in err


# --- desched render's output lints clean against OpenShift's build ---------------------------------------------------


def _accepted() -> list[tuple[str, ...]]:
    """Every set of profiles the operator renders (no forbidden pair, no refusal), in the CRD's enum order."""
    accepted = []
    for size in range(1, len(PROFILES) + 1):
        for combination in itertools.combinations(PROFILES, size):
            try:
                render(kubedescheduler(list(combination)))
            except RenderError:
                continue
            accepted.append(combination)
    return accepted


COOLDOWNS = {"devMigrationCooldown": "15m", "devMaxMigrationCooldown": "6h", "devMigrationHistoryWindow": "48h"}
CASES = [(combination, {}) for combination in _accepted()] + [((name,), COOLDOWNS) for name in KUBEVIRT]


def _justified(profiles: tuple[str, ...], finding: Finding) -> bool:
    """The findings a rendering is expected to have, each the operator's own doing or a mistake of the CR:

    * DS103: the operator still writes DefaultEvictor's ``ignorePvcPods`` and ``evictLocalStoragePods``, which
      upstream deprecated in v0.34 for ``podProtections`` (the build still honours them). DS103 does not run on a
      KubeDescheduler's rendering, where the user cannot change them.
    * DS201 and DS208: LongLifecycle with DevPreviewLongLifecycle, which the CRD allows, renders two identical profiles
      named LongLifecycle (DS503 says so on the CR).
    * DS207: modifiers alone (EvictPodsWith*) render no profile at all (DS503 says so on the CR).
    """
    if finding.rule == "DS103":
        return "ignorePvcPods" in finding.message or "evictLocalStoragePods" in finding.message
    if finding.rule in ("DS201", "DS208"):
        return {"LongLifecycle", "DevPreviewLongLifecycle"} <= set(profiles)
    if finding.rule == "DS207":
        return set(profiles) <= {"EvictPodsWithPVC", "EvictPodsWithLocalStorage"}
    return False


def test_the_combinations_cover_every_profile_and_the_kubevirt_plugin():
    assert {name for combination, _ in CASES for name in combination} == set(PROFILES)
    assert len(CASES) > 150
    assert sum(NAME in dump(render(kubedescheduler(list(c), **custom)).policy) for c, custom in CASES) > 40


@pytest.mark.parametrize(
    ("profiles", "customizations"),
    CASES,
    ids=["+".join(profiles) + ("+cooldowns" if custom else "") for profiles, custom in CASES],
)
def test_render_output_lints_clean_against_openshift(profiles: tuple[str, ...], customizations: dict[str, str]):
    resource = kubedescheduler(list(profiles), **customizations)
    policy = dump(render(resource).policy)
    runs = {
        "the operator's ConfigMap": lint(configmap(policy)),
        "--distribution openshift": lint(policy, distribution=OPENSHIFT),
        # findings of the CR itself (DS5xx) are not the rendering's
        "the KubeDescheduler": [
            f for f in lint(yaml.safe_dump(resource)) if f.message.startswith("in the policy the operator renders: ")
        ],
    }
    for how, findings in runs.items():
        unexpected = [f for f in findings if f.severity in ("error", "warning") and not _justified(profiles, f)]
        assert unexpected == [], how
