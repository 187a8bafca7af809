"""Lint cost is bounded: the YAML nodes of a file while it is read, the profiles, pluginConfig entries and nodes of
its policies before the rules run (README.md, Limits). Past a limit, one DS001 finding with a position; at the
limit, nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desched.gitops import policylimits
from desched.gitops.documents import extract
from desched.gitops.policylimits import MAX_PLUGIN_CONFIGS, MAX_POLICY_NODES, MAX_PROFILES, count_nodes
from desched.linter.finding import Finding
from desched.reading.sources import MAX_FILE_BYTES
from desched.reading.yamlsrc import MAX_EXPANDED_NODES, NodeBudget, NodeLimitError, load_all
from tests.conftest import lint
from tests.kernel.reading.test_yamlfast import libyaml

HEAD = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
PROFILE = "- name: p{index}\n  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n"
# Lint runs in a child that reports its own peak RSS (KiB) on stderr's last line: VmHWM, since getrusage's ru_maxrss
# of a process started from pytest also counts the RSS pytest had when it started it (Linux keeps it across exec).
MEASURED = """
import re, sys
from desched.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:
    print(re.search(r"VmHWM:\\s*(\\d+) kB", status.read())[1], file=sys.stderr)
sys.exit(code)
"""


def _policy(profiles: int, plugin_configs: int = 0) -> str:
    entries = "  pluginConfig:\n" + "  - name: PodLifeTime\n" * plugin_configs if plugin_configs else ""
    return HEAD + "profiles:\n" + "".join(PROFILE.format(index=i) + entries for i in range(profiles))


def _configmap(policy: str) -> str:
    """A ConfigMap holding ``policy`` in a block scalar: its lines start at line 6, column 5."""
    block = "".join(f"    {line}\n" for line in policy.splitlines())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: d}}\ndata:\n  policy.yaml: |\n{block}"


def _limit_findings(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.rule == "DS001"]


def test_a_read_limit_file_of_empty_profiles_is_refused_within_bounds(tmp_path: Path) -> None:
    """Issue 23 item 6: just under the 8 MiB read limit, 531,216 profiles took 31 s and 1.4 GB. The file is refused
    once its nodes pass the file's limit, long before the end, with one finding where it went past."""
    lines = [HEAD, "profiles:\n"]
    size, index = len(HEAD) + 10, 0
    while size < MAX_FILE_BYTES - 20:
        lines.append(f"- name: p{index}\n")
        size += len(lines[-1])
        index += 1
    path = tmp_path / "profiles.yaml"
    path.write_text("".join(lines))
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, "lint", "--format", "json", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    [finding] = json.loads(proc.stdout)["findings"]
    assert finding["rule"] == "DS001"
    assert finding["message"] == f"more than {MAX_EXPANDED_NODES} YAML nodes, the limit per file; not read"
    # the node past the limit: 5 on the first 3 lines (apiVersion, kind and their values, profiles), then 3 for each
    # profile from line 4 on: its key (column 3), its value (column 9), its mapping once closed (column 3)
    before, extra = divmod(MAX_EXPANDED_NODES - 5, 3)
    assert (finding["line"], finding["column"]) == (before + 4, 9 if extra == 1 else 3)
    assert int(proc.stderr.split()[-1]) < 500 * 1024, "peak RSS of at most 500 MiB"


@pytest.mark.parametrize("fast", [True, False], ids=["fast-scanner", "libyaml"])
def test_the_node_budget_is_exact_on_both_paths(fast: bool) -> None:
    text = "a: [x, y]\nb:\n- {c: d}\n"  # root, a, [x, y] (3), b, the list, {c: d} (3): 10 nodes
    compose = load_all if fast else libyaml
    budget = NodeBudget(10)
    compose(text, budget=budget)
    assert budget.left == 0
    with pytest.raises(NodeLimitError, match="more than 9 YAML nodes") as refused:
        compose(text, budget=NodeBudget(9))
    assert (refused.value.line, refused.value.column) == (1, 1)  # the root mapping, counted last, where it starts


@pytest.mark.parametrize("extra", [0, 1], ids=["at-limit", "past-limit"])
def test_the_file_node_limit_is_exact(extra: int) -> None:
    items = MAX_EXPANDED_NODES - 3 + extra  # the root mapping, its key and the sequence hold the rest
    text = "k: [" + ",".join("a" * items) + "]\n"
    if extra:
        with pytest.raises(NodeLimitError):
            load_all(text)
    else:
        assert len(load_all(text)[0]["k"]) == items


def test_aliases_count_the_nodes_they_stand_for() -> None:
    text = "a: &x [1, 2, 3]\nb: *x\nc: *x\n"  # root 1, 3 keys, [1, 2, 3] 4 nodes, standing three times: 16
    load_all(text, budget=NodeBudget(16))
    with pytest.raises(NodeLimitError, match="alias bomb"):
        load_all(text, budget=NodeBudget(15))


def test_an_anchor_taken_again_inside_its_collection_names_the_inner_node() -> None:
    assert load_all("a: &x [&x 1, 2]\nb: *x\n")[0]["b"] == 1


def test_the_policies_a_configmap_holds_as_text_spend_the_files_budget() -> None:
    text = _configmap(_policy(1))
    outer = NodeBudget(10**6)
    load_all(text, budget=outer)
    spent_outer = 10**6 - outer.left
    whole = NodeBudget(10**6)
    assert len(extract("cm.yaml", text, budget=whole).policies) == 1
    spent = 10**6 - whole.left
    assert spent > spent_outer
    just_short = extract("cm.yaml", text, budget=NodeBudget(spent - 1))
    [error] = just_short.errors
    assert not just_short.policies and "YAML nodes" in error.message and error.line > 5


@pytest.mark.parametrize("extra", [0, 1], ids=["at-limit", "past-limit"])
def test_profiles_per_policy(extra: int) -> None:
    text = _policy(MAX_PROFILES + extra)
    found = _limit_findings(lint(text))
    if not extra:
        assert found == []
        return
    [finding] = found
    expected = f"{MAX_PROFILES + 1} profiles exceed the limit of {MAX_PROFILES}; the policy is not checked"
    assert finding.message == expected
    assert (finding.line, finding.column) == (4 + 4 * MAX_PROFILES, 3)  # the first profile past the limit
    assert lint(text) == [finding]  # no rule ran on the policy


@pytest.mark.parametrize("extra", [0, 1], ids=["at-limit", "past-limit"])
def test_plugin_config_entries_per_profile(extra: int) -> None:
    found = _limit_findings(lint(_policy(2, MAX_PLUGIN_CONFIGS + extra)))
    if not extra:
        assert found == []
        return
    [finding] = found
    assert finding.message.startswith(f"profile 'p0': {MAX_PLUGIN_CONFIGS + 1} pluginConfig entries exceed the limit")
    assert (finding.line, finding.column) == (4 + 4 + 1 + MAX_PLUGIN_CONFIGS, 5)  # the first entry past the limit


@pytest.mark.parametrize("extra", [0, 1], ids=["at-limit", "past-limit"])
def test_policy_nodes_per_file(extra: int) -> None:
    """The policies of one file share the node limit: the one that goes past it and those after are not checked."""
    base = HEAD + "profiles:\n- name: p\n  pluginConfig:\n  - name: RemoveDuplicates\n    args:\n      namespaces:\n"

    def policy(names: int) -> str:  # its nodes: those of the policy without names, and one per name
        return base + "        exclude: [" + ", ".join(f"n{i}" for i in range(names)) + "]\n"

    empty = count_nodes(load_all(policy(0))[0], MAX_POLICY_NODES)
    first = (MAX_POLICY_NODES - 2 * empty) // 2
    second = MAX_POLICY_NODES - 2 * empty - first + extra
    after = f"---\n{HEAD}profiles: []\n" if extra else ""
    text = f"{policy(first)}---\n{policy(second)}{after}"
    found = _limit_findings(lint(text, target="v0.36"))
    if not extra:
        assert found == []
        return
    [finding] = found
    assert finding.message == (
        f"the policies of this file hold more than {MAX_POLICY_NODES} YAML nodes, the limit (1 more after this one "
        "are not checked either); the policy is not checked"
    )
    assert (finding.line, finding.column) == (policy(first).count("\n") + 2, 1)  # the second policy


def test_policy_limits_apply_to_every_shape() -> None:
    profiles = "".join(f"  - name: p{i}\n" for i in range(MAX_PROFILES + 1))
    helm = f"deschedulerPolicyAPIVersion: descheduler/v1alpha2\ndeschedulerPolicy:\n  profiles:\n{profiles}"
    configmap = _configmap(_policy(MAX_PROFILES + 1))
    operator = (
        "apiVersion: operator.openshift.io/v1\nkind: KubeDescheduler\nmetadata: {name: cluster}\nspec:\n  profiles:\n"
        + "  - AffinityAndTaints\n" * (MAX_PROFILES + 1)
    )
    expected = [("values.yaml", helm, MAX_PROFILES + 4, 5), ("cm.yaml", configmap, 4 * MAX_PROFILES + 9, 7),
                ("kd.yaml", operator, MAX_PROFILES + 6, 5)]  # fmt: skip
    for file, text, line, column in expected:
        [finding] = _limit_findings(lint(text, file=file))
        assert "profiles exceed the limit" in finding.message, file
        assert (finding.line, finding.column) == (line, column), file


def test_a_template_past_the_node_limit_is_a_finding_not_skipped(tmp_path: Path) -> None:
    from desched.linter.engine import Settings, read_file

    path = tmp_path / "values.yaml.tpl"
    path.write_text("{{- if .Values.on }}\nk: [" + ",".join("a" * MAX_EXPANDED_NODES) + "]\n{{- end }}\n")
    result = read_file(str(path), Settings())
    assert result.skipped is None
    [finding] = result.findings
    assert finding.rule == "DS001" and "YAML nodes" in finding.message


def test_the_limits_are_the_webhooks_defaults() -> None:
    from desched.webhook.limits import PolicyLimits

    webhook = PolicyLimits()
    assert (webhook.max_profiles, webhook.max_nodes) == (policylimits.MAX_PROFILES, policylimits.MAX_POLICY_NODES)


def test_counting_stops_past_the_limit_and_on_cycles() -> None:
    looped: list[object] = []
    looped.append(looped)
    assert count_nodes(looped, 10) == 11
    assert count_nodes({"a": [1, 2], "b": None}, 100) == 7  # the mapping, 2 keys, the list, 2 items, null
