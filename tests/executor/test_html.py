"""``desched simulate --html FILE``: the page's figures, its golden bytes, escaping, the unchanged stdout and the
errors (exit 2). The figures expected below are worked out by hand from ``golden/utilization.yaml``: every node
allocates 4 cpu, 8Gi and 20 pods; n1 holds web-1..4 (800m, 1Gi each) and a DaemonSet pod (100m, 64Mi), n2 a
DaemonSet pod and api-1 (200m, 512Mi), n3 db-1 and db-2 (1 cpu, 2Gi each) and batch-1 (500m, 1Gi, no owner)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from desched.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
SNAPSHOT = GOLDEN / "utilization.yaml"
POLICY = GOLDEN / "utilization-policy.yaml"
NOW = "2026-11-22T00:00:00Z"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class Rows(HTMLParser):
    """The text of each table row's cells, keyed by the row's ``data-node`` or ``data-pod``, per section id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: dict[str, dict[str, list[str]]] = {}
        self._section = ""
        self._row: list[str] | None = None
        self._key = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self._section = found.get("id") or ""
        elif tag == "tr" and ("data-node" in found or "data-pod" in found):
            self._key = found.get("data-node") or found.get("data-pod") or ""
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._row.append("")

    def handle_data(self, data: str) -> None:
        if self._row:
            self._row[-1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self._row is not None:
            self.rows.setdefault(self._section, {})[self._key] = [cell.strip() for cell in self._row]
            self._row = None


def rows(page: str) -> dict[str, dict[str, list[str]]]:
    parser = Rows()
    parser.feed(page)
    return parser.rows


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", "--now", NOW, *args])
    out, err = capsys.readouterr()
    return code, out, err


def page_of(capsys, tmp_path: Path, policy: Path | str, snapshot: Path = SNAPSHOT, *extra: str) -> str:
    target = tmp_path / "page.html"
    code, _, err = simulate(capsys, "--policy", str(policy), "--cluster", str(snapshot), "--html", str(target), *extra)
    assert code == 0, err
    return target.read_text(encoding="utf-8")


def policy_file(tmp_path: Path, plugin: str, args: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        f"  - name: {plugin}\n    args: {args}\n  plugins:\n    balance:\n      enabled: [{plugin}]\n"
    )
    return path


def test_low_node_utilization_figures_and_roles_before_and_after_the_cycle(capsys, tmp_path: Path) -> None:
    nodes = rows(page_of(capsys, tmp_path, POLICY))["utilization"]
    assert nodes == {
        "n1": [
            "n1",
            "overutilized → appropriately utilized",
            "82.5% → 42.5%",  # web-1 and web-2 leave (the first two of equal pods, as listed)
            "50.8% → 25.8%",
            "25.0% → 15.0%",
        ],
        "n2": ["n2", "underutilized", "7.5%", "7.0%", "10.0%"],
        "n3": ["n3", "overutilized → underutilized", "62.5% → 12.5%", "62.5% → 12.5%", "15.0% → 5.0%"],
    }


def test_evictions_are_grouped_by_plugin_with_the_ranges_and_how_often_each_pod_is_chosen(
    capsys, tmp_path: Path
) -> None:
    page = page_of(capsys, tmp_path, POLICY, SNAPSHOT, "--samples", "8", "--jobs", "1", "--format", "json")
    found = rows(page)
    assert set(found["evictions"]) == {"shop/db-2", "shop/db-1", "shop/web-1", "shop/web-2"}
    assert "LowNodeUtilization: 3 (min / median / max over 8 listing orders: 3 / 3 / 3)" in page
    assert "8 orders (as listed and 7 shuffled): a pod chosen in 48.3 % of orders or more is found" in page
    chosen = {pod: cells[3] for pod, cells in found["forecast"].items()}
    assert chosen["shop/db-1"] == chosen["shop/db-2"] == "8 of 8"
    web = [int(chosen[f"shop/web-{index}"].split()[0]) for index in range(1, 5)]
    assert sum(web) == 2 * 8 and max(web) < 8  # two of four equal pods per order, not always the same


def test_protected_pods_come_with_the_default_evictors_reasons(capsys, tmp_path: Path) -> None:
    protected = rows(page_of(capsys, tmp_path, POLICY))["verdicts"]
    assert {pod: cells[4] for pod, cells in protected.items()} == {
        "shop/agent-n1": "daemonset pods are protected against eviction",
        "shop/agent-n2": "daemonset pods are protected against eviction",
        "shop/batch-1": "pod does not have any ownerRefs",
    }


def test_high_node_utilization_drains_the_underutilized_node_into_the_others(capsys, tmp_path: Path) -> None:
    policy = policy_file(tmp_path, "HighNodeUtilization", "{thresholds: {cpu: 20, memory: 20, pods: 20}}")
    found = rows(page_of(capsys, tmp_path, policy))
    assert {node: cells[1] for node, cells in found["utilization"].items()} == {
        "n1": "destination",
        "n2": "underutilized",
        "n3": "destination",
    }
    assert found["utilization"]["n2"][2] == "7.5% → 2.5%"  # api-1 leaves, the DaemonSet pod stays
    assert set(found["evictions"]) == {"shop/api-1"}


def test_deviation_thresholds_are_shown_as_computed_before_and_after(capsys, tmp_path: Path) -> None:
    args = "{useDeviationThresholds: true, thresholds: {cpu: 10}, targetThresholds: {cpu: 10}}"
    page = page_of(capsys, tmp_path, policy_file(tmp_path, "LowNodeUtilization", args))
    # the average cpu before is (82.5 + 7.5 + 62.5) / 3 = 50.83 %: 10 points under and over it
    assert "thresholds: cpu 40.8%; targetThresholds: cpu 60.8% (after the cycle:" in page


def test_without_a_utilization_plugin_the_page_shows_request_usage_without_thresholds(capsys, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.read_text().replace("    balance:\n      enabled: [LowNodeUtilization]\n", ""))
    page = page_of(capsys, tmp_path, policy)
    assert rows(page)["utilization"]["n3"] == ["n3", "-", "62.5% → 37.5%", "62.5% → 37.5%", "15.0% → 10.0%"]
    assert "No utilization plugin is enabled" in page and '<line class="low"' not in page
    assert "targetThresholds</span>" not in page  # no threshold lines, none in the legend


def test_a_plugin_that_fails_is_shown_failed_with_its_message(capsys, tmp_path: Path) -> None:
    args = "{thresholds: {cpu: 20}, targetThresholds: {cpu: 60}, metricsUtilization: {metricsServer: true}}"
    policy = policy_file(tmp_path, "LowNodeUtilization", args)
    policy.write_text(policy.read_text() + "metricsProviders: [{source: KubernetesMetrics}]\n")
    page = page_of(capsys, tmp_path, policy)
    assert '<p class="error">the plugin failed: LowNodeUtilization: metricsUtilization' in page
    assert "The plugin failed in this cycle" in page and "the plugin evicts" not in page
    assert rows(page)["utilization"]["n1"][2] == "82.5%"  # nothing evicted


def test_a_skipped_cycle_says_so(capsys, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.read_text() + "nodeSelector: kubernetes.io/hostname=n1\n")
    page = page_of(capsys, tmp_path, policy)
    assert "The cycle is skipped: fewer than 2 ready nodes" in page and 'id="utilization"' not in page


def test_every_string_from_the_snapshot_is_escaped(capsys, tmp_path: Path) -> None:
    listing = yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))
    for item in listing["items"]:
        if item["metadata"]["name"] == "n2":  # a node and the pods on it
            item["metadata"]["name"] = HOSTILE
        if item["kind"] == "Pod":
            item["metadata"]["namespace"] = HOSTILE
            if item["spec"]["nodeName"] == "n2":
                item["spec"]["nodeName"] = HOSTILE
    snapshot = tmp_path / "hostile.json"
    snapshot.write_text(json.dumps(listing), encoding="utf-8")
    page = page_of(capsys, tmp_path, POLICY, snapshot)
    assert HOSTILE not in page and page.count("<script") == 1 and "<img" not in page
    found = rows(page)
    assert HOSTILE in found["utilization"] and found["verdicts"][f"{HOSTILE}/agent-n2"][2] == HOSTILE
    assert {pod.rpartition("/")[0] for pod in found["evictions"]} == {HOSTILE}


def test_the_page_loads_nothing_from_anywhere(capsys, tmp_path: Path) -> None:
    page = page_of(capsys, tmp_path, POLICY, SNAPSHOT, "--samples", "3", "--jobs", "1")
    assert "default-src 'none'" in page
    for fetching in ("src=", "href=", "url(", "@import", "http://", "https://"):
        assert fetching not in page


def test_the_page_is_the_golden_file(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    relative = [str(path.relative_to(ROOT)) for path in (POLICY, SNAPSHOT)]
    page = page_of(capsys, tmp_path, relative[0], Path(relative[1]), "--samples", "6", "--jobs", "1")
    golden = GOLDEN / "utilization.html"
    if os.environ.get("DESCHED_UPDATE_GOLDENS") == "1":
        golden.write_text(page, encoding="utf-8")
    assert golden.exists(), f"missing {golden}; run with DESCHED_UPDATE_GOLDENS=1 and review it"
    assert page == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_stdout_is_the_same_with_or_without_the_page(capsys, tmp_path: Path, fmt: str) -> None:
    common = ["--policy", str(POLICY), "--cluster", str(SNAPSHOT), "--format", fmt, "--samples", "4", "--jobs", "1"]
    without = simulate(capsys, *common)
    with_page = simulate(capsys, *common, "--html", str(tmp_path / "page.html"))
    assert with_page == without and without[0] == 0
    if fmt == "json":
        assert "pods" not in json.loads(without[1])  # the page's verdicts do not leak into the JSON


@pytest.mark.parametrize("target", ["missing-folder/page.html", "."])
def test_a_file_that_cannot_be_written_is_a_usage_error(capsys, tmp_path: Path, target: str) -> None:
    path = str(tmp_path / target)
    code, out, err = simulate(capsys, "--policy", str(POLICY), "--cluster", str(SNAPSHOT), "--html", path)
    assert (code, out) == (2, "")
    assert err.startswith(f"desched: --html {path}: ") and err.count("\n") == 1


def test_the_page_module_is_imported_only_for_a_page() -> None:
    probe = "import sys, desched.executor.command; print('desched.executor.page' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
