"""SARIF runs hold at most 25,000 results (GitHub code scanning refuses a larger upload): what is cut, and the
notification that says so."""

from __future__ import annotations

import json

from desched.linter.finding import Finding
from desched.linter.formatters.sarif import MAX_RESULTS, render
from tests.formatters.cases import _report


def _findings(counts: dict[str, int]) -> list[Finding]:
    found = []
    for kind, count in counts.items():
        severity = "warning" if kind == "suppressed" else kind
        suppressed = "known" if kind == "suppressed" else None
        for n in range(count):
            finding = Finding("DS305", severity, f"{kind}-{n // 100}.yaml", n % 100 + 1, 1, f"{kind} {n}", "")
            found.append(finding._replace(suppressed=suppressed))
    return found


def _run(counts: dict[str, int]) -> dict:
    return json.loads(render(_report(_findings(counts), files=1)))["runs"][0]


def test_thirty_thousand_findings_lose_the_suppressed_then_the_least_severe():
    run = _run({"suppressed": 2_000, "info": 10_000, "warning": 10_000, "error": 8_000})
    results = run["results"]
    assert len(results) == MAX_RESULTS == 25_000
    assert not any("suppressions" in result for result in results)
    levels = [result["level"] for result in results]
    assert (levels.count("error"), levels.count("warning"), levels.count("note")) == (8_000, 10_000, 7_000)
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "warning"
    assert "5,000 left out (2,000 suppressed, 3,000 info)" in notification["message"]["text"]
    messages = {result["message"]["text"] for result in results}
    assert "info 0" in messages  # the first infos stay, the last ones go


def test_only_errors_keep_the_first_ones():
    run = _run({"error": 30_000})
    assert len(run["results"]) == 25_000
    assert "5,000 left out (5,000 error)" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_at_the_cap_nothing_is_cut_or_said():
    run = _run({"warning": 25_000})
    assert len(run["results"]) == 25_000 and "invocations" not in run
