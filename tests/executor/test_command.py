"""``desched simulate``: the output contract, the lint gate and clear errors (exit codes 0 and 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desched.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "fixtures" / "snapshots" / "small.yaml"
GOLDEN = Path(__file__).parent / "golden"
POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: default
  pluginConfig:
  - name: DefaultEvictor
    args: {nodeFit: true}
  - name: RemovePodsViolatingNodeTaints
  - name: RemovePodsHavingTooManyRestarts
    args: {podRestartThreshold: 5}
  - name: RemoveFailedPods
    args: {minPodLifetimeSeconds: 60}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints, RemovePodsHavingTooManyRestarts, RemoveFailedPods]
"""


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return path


@pytest.mark.parametrize(("fmt", "golden"), [("json", "small.json"), ("text", "small.txt")])
def test_simulate_output_matches_the_golden_files(capsys, policy: Path, fmt: str, golden: str) -> None:
    code, out, err = simulate(
        capsys,
        "--policy",
        str(policy),
        "--cluster",
        str(SMALL),
        "--now",
        "2026-11-22T00:00:00Z",
        "--format",
        fmt,
        "--explain",
    )
    assert (code, err) == (0, "")
    assert out == (GOLDEN / golden).read_text()


def test_json_contract(capsys, policy: Path) -> None:
    code, out, _ = simulate(
        capsys, "--policy", str(policy), "--cluster", str(SMALL), "--now", "2026-11-22T00:00:00Z", "--format", "json"
    )
    document = json.loads(out)
    assert code == 0
    assert set(document) == {"evictions", "summary", "failures", "pluginErrors"}
    assert document["pluginErrors"] == []
    assert set(document["summary"]) == {"evicted", "byPlugin", "byNode", "byNamespace", "skippedCycle"}
    for eviction in document["evictions"]:
        assert set(eviction) == {"namespace", "pod", "node", "profile", "plugin"}
    assert document["summary"]["evicted"] == len(document["evictions"]) == sum(document["summary"]["byNode"].values())


METRICS_POLICY = """apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
metricsProviders:
- source: Prometheus
  prometheus: {url: "https://prometheus.example"}
profiles:
- name: metrics
  pluginConfig:
  - name: LowNodeUtilization
    args:
      thresholds: {MetricResource: 20}
      targetThresholds: {MetricResource: 50}
      metricsUtilization: {source: Prometheus, prometheus: {query: up}}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
"""


def test_json_carries_the_plugin_failures_the_text_shows(capsys, tmp_path: Path) -> None:
    # issue 27, item 10: a plugin that fails is in the JSON as well as in the text (and warned on stderr)
    policy = tmp_path / "metrics.yaml"
    policy.write_text(METRICS_POLICY)
    args = ("--policy", str(policy), "--cluster", str(SMALL), "--now", "2026-11-22T00:00:00Z")
    code, text, text_err = simulate(capsys, *args)
    assert code == 0
    code, out, err = simulate(capsys, *args, "--format", "json")
    assert code == 0 and err == text_err
    document = json.loads(out)
    [error] = document["pluginErrors"]
    assert (error["profile"], error["plugin"]) == ("metrics", "LowNodeUtilization")
    assert set(error) == {"profile", "plugin", "message"}
    assert f"plugin error: profile metrics: plugin LowNodeUtilization: {error['message']}\n" in text
    assert err == f"desched: warning: profile metrics: plugin LowNodeUtilization: {error['message']}\n"
    # the message says what happens: the plugin fails, nothing is balanced on requests instead
    assert "metricsUtilization (Prometheus)" in error["message"] and "fails and evicts nothing" in error["message"]
    assert document["evictions"] == [] and document["failures"] == []


def test_the_clock_decides_age_based_plugins(capsys, tmp_path: Path) -> None:
    policy = tmp_path / "no-node-fit.yaml"
    policy.write_text(POLICY.replace("args: {nodeFit: true}", "args: {}"))
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(
        SMALL.read_text().replace(
            "  metadata: {name: batch-oom, namespace: shop}",
            "  metadata: {name: batch-oom, namespace: shop, ownerReferences: "
            "[{kind: Job, name: j, uid: j1}], creationTimestamp: "
            "'2026-11-21T23:59:30Z'}",
        )
    )
    young = json.loads(
        simulate(
            capsys,
            "--policy",
            str(policy),
            "--cluster",
            str(snapshot),
            "--now",
            "2026-11-22T00:00:00Z",
            "--format",
            "json",
        )[1]
    )
    old = json.loads(
        simulate(
            capsys,
            "--policy",
            str(policy),
            "--cluster",
            str(snapshot),
            "--now",
            "2026-11-22T00:01:00Z",
            "--format",
            "json",
        )[1]
    )
    assert "batch-oom" not in {e["pod"] for e in young["evictions"]}
    assert "batch-oom" in {e["pod"] for e in old["evictions"]}


def test_fewer_than_two_ready_nodes_skip_the_cycle(capsys, policy: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "one-node.yaml"
    snapshot.write_text(
        SMALL.read_text()
        .replace(
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n2",
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n2\n    annotations: {}",
            1,
        )
        .replace(
            '    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}',
            '    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}\n    conditions: [{type: Ready, status: "False"}]',
        )
    )
    code, out, _ = simulate(capsys, "--policy", str(policy), "--cluster", str(snapshot), "--format", "json")
    assert code == 0
    assert json.loads(out)["summary"] == {
        "evicted": 0,
        "byPlugin": {},
        "byNode": {},
        "byNamespace": {},
        "skippedCycle": True,
    }


def test_a_policy_with_lint_errors_is_refused(capsys, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(POLICY.replace("podRestartThreshold: 5", "podRestartThreshold: 0"))
    code, out, err = simulate(capsys, "--policy", str(broken), "--cluster", str(SMALL))
    assert (code, out) == (2, "")
    assert "DS301" in err
    assert err.strip().splitlines()[-1] == (
        f"desched: {broken}: the policy has lint errors (1); fix them before running it"
    )


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda d: ("policy.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n"),
            "no descheduler policy in {policy}",
        ),
        (lambda d: ("snapshot", "{not json"), "cannot read {snapshot}: "),
        (lambda d: ("snapshot", b"kind: List\n\x80 binary"), "cannot read {snapshot}:2:1: invalid UTF-8 byte 0x80"),
        (lambda d: ("now", "yesterday"), "--now 'yesterday' is not an RFC 3339 time"),
        (
            lambda d: (
                "policy.yaml",
                POLICY.replace("    args: {nodeFit: true}", "    args: {priorityThreshold: {name: gold}}"),
            ),
            'unable to get priority class "gold"',
        ),
    ],
    ids=["no-policy", "broken-snapshot", "binary-snapshot", "bad-clock", "missing-priority-class"],
)
def test_bad_input_is_one_clear_line_and_exit_2(capsys, tmp_path: Path, setup, message: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(SMALL.read_text())
    now = "2026-11-22T00:00:00Z"
    target, content = setup(tmp_path)
    if target == "now":
        now = content
    else:
        path = snapshot if target == "snapshot" else tmp_path / target
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    code, out, err = simulate(capsys, "--policy", str(policy), "--cluster", str(snapshot), "--now", now)
    assert (code, out) == (2, "")
    assert err.startswith("desched: " + message.format(policy=policy, snapshot=snapshot)), err
    assert err.count("\n") == 1


def test_simulate_is_listed_in_help_and_lint_stays_light() -> None:
    done = subprocess.run([sys.executable, "-m", "desched", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert "simulate" in done.stdout and "run" in done.stdout, done.stdout + done.stderr


def test_the_progress_line_counts_plugins_and_ends_with_a_newline(capsys) -> None:
    from desched.executor.command import _progress

    observe = _progress(2)
    observe("default", "PodLifeTime", 0.25)
    observe("default", "LowNodeUtilization", 1.5)
    err = capsys.readouterr().err
    assert err == ("\r[1/2] default/PodLifeTime (0.2 s)\033[K\r[2/2] default/LowNodeUtilization (1.5 s)\033[K\n")


@pytest.mark.parametrize(
    ("spelling", "enabled", "code"),
    [
        ("preevictionfilter", "[DefaultEvictor]", 0),
        ("preEvictionFilter", "[DefaultEvictor]", 0),
        ("preEvictionFilter", "[DefaultEvictor, RemoveDuplicates]", 2),
    ],
)
def test_pre_eviction_filter_spellings_run_as_upstream_would(
    capsys, tmp_path: Path, spelling: str, enabled: str, code: int
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY + f"    {spelling}:\n      enabled: {enabled}\n")
    args = ("--cluster", str(SMALL), "--now", "2026-11-22T00:00:00Z", "--format", "json")
    got, out, err = simulate(capsys, "--policy", str(path), *args)
    assert got == code, err
    if code:
        assert "(DS003)" in err and "lint errors" in err
        return
    assert ("DS003" in err) is (spelling == "preEvictionFilter")
    plain = tmp_path / "plain.yaml"
    plain.write_text(POLICY)
    assert out == simulate(capsys, "--policy", str(plain), *args)[1]


def test_lint_grades_pre_eviction_filter_by_what_dropping_it_changes(tmp_path: Path) -> None:
    from desched.linter.lint import lint_paths

    for enabled, severity in (("[DefaultEvictor]", "warning"), ("[RemoveDuplicates]", "error"), ("[]", "warning")):
        path = tmp_path / "policy.yaml"
        path.write_text(POLICY + f"    preEvictionFilter:\n      enabled: {enabled}\n")
        (finding,) = [f for f in lint_paths([str(path)]).findings if f.rule == "DS003"]
        assert (finding.severity, finding.line, finding.column) == (severity, 16, 5)
    path.write_text(POLICY + "    preEvictionFilter:\n      disabled: [DefaultEvictor]\n")
    (finding,) = [f for f in lint_paths([str(path)]).findings if f.rule == "DS003"]
    assert finding.severity == "error"  # upstream keeps DefaultEvictor: the writer meant otherwise
