"""``desched simulate --html`` in a real browser: Debian's headless Chromium driven through chromedriver by selenium.

The page is loaded from ``file://`` with the network-free flags; the browser log must hold no SEVERE entry (a script
error, a refused resource, a Content-Security-Policy violation), the DOM must show the nodes and evictions simulate
printed, a hostile snapshot's names must come out as text, and a screenshot is taken. Without the browser (it cannot
be installed here) the tests skip with the installer's reason.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desched.cli import main
from tests.browser.install import InstallError, install

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parents[1] / "executor" / "golden"
SNAPSHOT = GOLDEN / "utilization.yaml"
POLICY = GOLDEN / "utilization-policy.yaml"
NOW = "2026-11-22T00:00:00Z"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1400",
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium session (skipped with the installer's reason when it cannot be installed)."""
    try:
        found = install()
    except InstallError as error:
        pytest.skip(f"no Chromium: {error}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="desched-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(found.chromium)
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(executable_path=str(found.chromedriver)))
        try:
            yield driver
        finally:
            driver.quit()


def simulate(capsys: pytest.CaptureFixture[str], page: Path, policy: Path, snapshot: Path, *extra: str) -> Any:
    """Run ``simulate --html page --format json`` and return its JSON document."""
    inputs = ["--policy", str(policy), "--cluster", str(snapshot), "--now", NOW]
    code = main(["simulate", *inputs, "--format", "json", "--html", str(page), *extra])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def load(driver: Any, page: Path) -> list[dict[str, Any]]:
    """Open ``page`` and return the browser log entries the load produced at level SEVERE."""
    driver.get_log("browser")  # drop what an earlier page left
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def cells(driver: Any, selector: str) -> list[list[str]]:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, selector)
    return [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "th, td")] for row in rows]


def test_the_page_shows_the_nodes_and_evictions_simulate_printed(browser: Any, capsys, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "forecast.html"
    document = simulate(capsys, page, POLICY, SNAPSHOT, "--samples", "12", "--jobs", "1")
    assert load(browser, page) == []
    nodes = cells(browser, "#utilization tr[data-node]")
    assert [row[0] for row in nodes] == ["n1", "n2", "n3"]
    roles = {row[0]: row[1] for row in nodes}
    assert roles["n2"] == "underutilized" and roles["n1"].startswith("overutilized")
    shown = {tuple(row[:3]) for row in cells(browser, "#evictions tbody tr")}
    assert shown == {(e["namespace"], e["pod"], e["node"]) for e in document["evictions"]}
    chosen = {row[1]: row[3] for row in cells(browser, "#forecast tbody tr")}
    assert chosen == {p["pod"]: f"{p['evictedIn']} of 12" for p in document["forecast"]["pods"]}
    protected = cells(browser, "#protected tbody tr")
    assert {row[1] for row in protected} == {"agent-n1", "agent-n2", "batch-1"}
    search = browser.find_element(By.ID, "filter")  # the inline script runs: the filter hides rows
    search.send_keys("daemonset")
    visible = [row for row in browser.find_elements(By.CSS_SELECTOR, "#protected tbody tr") if row.is_displayed()]
    assert sorted(row.find_elements(By.TAG_NAME, "td")[1].text for row in visible) == ["agent-n1", "agent-n2"]
    shot = tmp_path / "forecast.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes().startswith(PNG_SIGNATURE) and shot.stat().st_size > 10_000


HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def test_a_hostile_snapshot_renders_as_text(browser: Any, capsys, tmp_path: Path) -> None:
    listing = _yaml(SNAPSHOT)
    for item in listing["items"]:
        if item["metadata"]["name"] == "n2":
            item["metadata"]["name"] = HOSTILE
        if item["kind"] == "Pod":
            item["metadata"]["namespace"] = HOSTILE
            item["spec"]["nodeName"] = HOSTILE if item["spec"]["nodeName"] == "n2" else item["spec"]["nodeName"]
    snapshot = tmp_path / "hostile.json"
    snapshot.write_text(json.dumps(listing), encoding="utf-8")
    page = tmp_path / "hostile.html"
    simulate(capsys, page, POLICY, snapshot)
    assert load(browser, page) == []
    assert browser.title == "desched forecast"  # no injected script ran
    assert browser.execute_script("return document.querySelectorAll('img, script').length") == 1  # the page's own
    assert [row[0] for row in cells(browser, "#utilization tr[data-node]")] == ["n1", HOSTILE, "n3"]
    assert {row[0] for row in cells(browser, "#protected tbody tr")} == {HOSTILE}
    shot = tmp_path / "hostile.png"
    assert browser.save_screenshot(str(shot)) and shot.read_bytes().startswith(PNG_SIGNATURE)


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_console_check_sees_a_script_error(browser: Any, tmp_path: Path) -> None:
    """The SEVERE entries the tests above expect none of do reach the log: a page with a failing script has one."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><title>broken</title><script>missing_function()</script>", encoding="utf-8")
    assert any("missing_function" in entry["message"] for entry in load(browser, page))
