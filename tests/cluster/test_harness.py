"""The harness's pure parts: apt source conversion, version discovery, object preparation, snapshot reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import prerequisites
from tests.kcp import install
from tests.kcp.api import Json, pdb_api_version
from tests.kcp.install import deb_src_entries
from tests.kcp.kubelet import node_object
from tests.kcp.snapshot import _by_depth, isolate, read

DEB822 = """Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: contrib
"""


def test_deb822_stanzas_get_deb_src_twins() -> None:
    assert deb_src_entries([("debian.sources", DEB822)]) == (
        "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def test_one_line_entries_become_deb822_deb_src() -> None:
    text = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror/debian bookworm main contrib\ndeb-src x y z\n"
    assert deb_src_entries([("sources.list", text)]) == (
        "Types: deb-src\nURIs: http://mirror/debian\nSuites: bookworm\nComponents: main contrib\nSigned-By: /k.gpg\n"
    )
    assert deb_src_entries([("sources.list", "# nothing\n")]) == ""


def test_pdb_version_follows_discovery() -> None:
    old = {"name": "policy", "versions": [{"groupVersion": "policy/v1beta1", "version": "v1beta1"}]}
    new = {
        "name": "policy",
        "versions": [
            {"groupVersion": "policy/v1", "version": "v1"},
            {"groupVersion": "policy/v1beta1", "version": "v1beta1"},
        ],
    }
    assert pdb_api_version(old) == "policy/v1beta1"
    assert pdb_api_version(new) == "policy/v1"


def test_nodes_lose_server_fields_and_the_not_ready_taint() -> None:
    created, status = node_object(
        {
            "metadata": {"name": "n", "uid": "u", "resourceVersion": "9"},
            "spec": {
                "providerID": "aws://x",
                "taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}],
            },
            "status": {"capacity": {"cpu": "2"}},
        }
    )
    assert created == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n"}},
        "spec": {},
    }
    assert status["status"]["allocatable"] == {"cpu": "2"}
    assert status["status"]["conditions"][0]["type"] == "Ready"


def test_controllers_are_created_owners_first() -> None:
    def obj(name: str, uid: str, owner: str | None = None) -> Json:
        metadata: Json = {"name": name, "uid": uid}
        if owner:
            metadata["ownerReferences"] = [{"uid": owner}]
        return {"metadata": metadata}

    rs, deploy, lone, cyclic = obj("rs", "2", owner="1"), obj("deploy", "1"), obj("lone", "3"), obj("c", "4", owner="4")
    levels = _by_depth([rs, deploy, lone, cyclic])
    assert [[item["metadata"]["name"] for item in level] for level in levels] == [["deploy", "lone", "c"], ["rs"]]


def test_snapshots_read_lists_multi_documents_and_json(tmp_path: Path) -> None:
    multi = tmp_path / "multi.yaml"
    multi.write_text(
        "kind: List\nitems:\n- {kind: Pod, metadata: {name: a}}\n---\n---\nkind: Node\nmetadata: {name: n}\n"
    )
    single = tmp_path / "one.json"
    single.write_text(json.dumps({"kind": "PodList", "items": [{"kind": "Pod", "metadata": {"name": "b"}}]}))
    assert [obj["metadata"]["name"] for obj in read([multi, single])] == ["a", "n", "b"]


def test_isolation_renames_namespaces_and_nodes_consistently() -> None:
    objects: list[Json] = [
        {"kind": "Namespace", "metadata": {"name": "shop"}},
        {"kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}},
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}, "spec": {"nodeName": "n1"}},
        {"kind": "PriorityClass", "metadata": {"name": "high"}},
    ]
    renamed = isolate(objects, "-x")
    assert [obj["metadata"]["name"] for obj in renamed] == ["shop-x", "n1-x", "p", "high"]
    assert renamed[1]["metadata"]["labels"]["kubernetes.io/hostname"] == "n1-x"
    assert renamed[2]["metadata"]["namespace"] == "shop-x" and renamed[2]["spec"]["nodeName"] == "n1-x"
    assert objects[2]["spec"]["nodeName"] == "n1"


def test_a_failed_step_names_itself_and_is_remembered_for_the_skip_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESCHED_KCP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(install, "find", lambda: None)
    log = tmp_path / "step.log"
    with open(log, "w") as sink, pytest.raises(install.InstallError) as error:
        prerequisites.run(["sh", "-c", "echo building; echo 'no space left' >&2; exit 3"], "make (building)", sink, log)
    assert str(error.value).startswith(f"make (building) failed with exit code 3 (full log: {log}):")
    assert "no space left" in str(error.value)

    def failing(root: Path, out: object) -> install.Installation:
        raise error.value

    monkeypatch.setattr(install, "_install", failing)
    with pytest.raises(install.InstallError):
        install.install()
    assert install.last_failure() == str(error.value).strip()

    monkeypatch.setattr(install, "_install", lambda root, out: install.Installation("v", Path("/e"), Path("/b")))
    assert install.install().version == "v"
    assert install.last_failure() is None
