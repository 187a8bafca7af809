"""pytest plugin: the real control plane for tests marked ``@pytest.mark.cluster``.

Fixtures: ``control_plane`` (session: started once, stopped at the end; processes die with the test process even when it
is killed), ``kube`` (an admin :class:`~tests.kcp.api.Api`), ``kubelet`` (the session's fake kubelet), ``namespace``
(a fresh namespace per test, deleted afterwards) and ``nodes`` (creates Ready nodes for one test, deleted afterwards).
When the binaries are not installed the cluster tests are skipped with the installer's reason, and the terminal summary
always says how many cluster tests ran, passed and were skipped.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.kcp import controlplane, install
from tests.kcp.api import Api, ApiError, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.install import Installation
from tests.kcp.kubelet import FakeKubelet
from tests.kcp.snapshot import LoadReport, isolate, load

MARK = "cluster"
NAMESPACE_LABEL = "desched.test/namespace"
_outcomes: Counter[str] = Counter()
_skips: Counter[str] = Counter()
_server: list[str] = []
_marked: set[str] = set()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _marked.update(item.nodeid for item in items if item.get_closest_marker(MARK) is not None)
    for item in items:
        needs = {"control_plane", "installation"} & set(getattr(item, "fixturenames", ()))
        if needs and item.get_closest_marker(MARK) is None:
            raise pytest.UsageError(f"{item.nodeid} uses the control plane but is not marked @pytest.mark.{MARK}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.nodeid not in _marked:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _outcomes[report.outcome] += 1
        if report.skipped and isinstance(report.longrepr, tuple):
            _skips[str(report.longrepr[2]).removeprefix("Skipped: ")] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _outcomes:
        return
    where = f" against {_server[0]}" if _server else ""
    counts = ", ".join(f"{count} {outcome}" for outcome, count in sorted(_outcomes.items()))
    terminalreporter.write_sep("-", f"cluster tests{where}: {counts}")
    for reason, count in _skips.items():
        terminalreporter.write_line(f"skipped {count}: {reason}")


@pytest.fixture(scope="session")
def installation() -> Installation:
    found = install.find()
    if found is None:
        reason = install.last_failure() or "not installed (run scripts/control-plane install; ./scripts/test does)"
        pytest.skip(f"no Kubernetes control plane: {reason.splitlines()[0]}")
    _server[:] = [f"kube-apiserver from Debian {found.version}"]
    return found


@pytest.fixture(scope="session")
def control_plane(installation: Installation) -> Iterator[ControlPlane]:
    controlplane.sweep()
    plane = controlplane.up(installation, tied_to_parent=True)
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def kube(control_plane: ControlPlane) -> Iterator[Api]:
    api = control_plane.api()
    yield api
    api.close()


@pytest.fixture(scope="session")
def kubelet(kube: Api) -> Iterator[FakeKubelet]:
    agent = FakeKubelet(kube)
    agent.start()
    yield agent
    agent.stop()


@pytest.fixture
def namespace(kube: Api, request: pytest.FixtureRequest) -> Iterator[str]:
    stem = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{stem}-{secrets.token_hex(3)}"
    metadata = {"name": name, "labels": {NAMESPACE_LABEL: name}}
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
    yield name
    with contextlib.suppress(ApiError):
        kube.delete("v1", "Namespace", name)


@pytest.fixture
def nodes(kubelet: FakeKubelet) -> Iterator[Callable[..., list[str]]]:
    """``nodes(count, allocatable=..., labels=..., taints=...)`` creates Ready nodes named uniquely for this test."""
    made: list[str] = []

    def make(
        count: int = 1,
        allocatable: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
        taints: list[Json] | None = None,
    ) -> list[str]:
        prefix = f"node-{secrets.token_hex(3)}"
        specs = [
            {
                "metadata": {"name": f"{prefix}-{index}", "labels": dict(labels or {})},
                "spec": {"taints": taints or []},
                "status": {"allocatable": allocatable} if allocatable else {},
            }
            for index in range(count)
        ]
        made.extend(kubelet.add_nodes(specs))
        return made[-count:]

    yield make
    kubelet.remove_nodes(made)


@pytest.fixture
def load_snapshot(kube: Api, kubelet: FakeKubelet) -> Iterator[Callable[[list[Json]], tuple[str, LoadReport]]]:
    """``load_snapshot(objects)`` loads them with namespaces and nodes renamed for this test (returns the suffix and the
    report); the namespaces and nodes are deleted afterwards."""
    loaded: list[Json] = []

    def run(objects: list[Json]) -> tuple[str, LoadReport]:
        suffix = f"-{secrets.token_hex(3)}"
        renamed = isolate(objects, suffix)
        loaded.extend(renamed)
        return suffix, load(kube, kubelet, renamed)

    yield run
    names = {obj["metadata"].get("namespace") for obj in loaded} | {
        obj["metadata"]["name"] for obj in loaded if obj.get("kind") == "Namespace"
    }
    for name in sorted(filter(None, names)):
        with contextlib.suppress(ApiError):
            kube.delete("v1", "Namespace", name)
    kubelet.remove_nodes(obj["metadata"]["name"] for obj in loaded if obj.get("kind") == "Node")
