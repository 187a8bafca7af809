"""``desched simulate --cluster``: the snapshot is read bounded and refused, in one line with exit code 2, when it is
too large, not UTF-8 text or not a snapshot (desched.executor.snapshot)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.clusters import generate
from desched.executor.snapshot import read_snapshot
from tests.executor.test_command import POLICY

ENDLESS = "import sys\nline = b'# ' + b'x' * 1021 + b'\\n'\nwhile True:\n    sys.stdout.buffer.write(line * 1024)\n"


def simulate(
    tmp_path: Path, cluster: str, data: bytes | None = None, stream: IO[bytes] | None = None, **env: str
) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``desched simulate --cluster CLUSTER`` in its own process (60 s at most),
    stdin ``data`` or ``stream``."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    command = [sys.executable, "-m", "desched", "simulate", "--policy", str(policy), "--cluster", cluster]
    feed: dict[str, Any] = {"input": data} if stream is None else {"stdin": stream}
    done = subprocess.run(command, capture_output=True, timeout=60, env={**os.environ, **env}, **feed)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def one_line_error(code: int, out: str, err: str) -> str:
    """``err``, once checked to be one ``desched: cannot read ...`` line with exit code 2 and no output."""
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("desched: cannot read ") and "Traceback" not in err, err
    return err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_stops_at_the_snapshot_limit(tmp_path: Path) -> None:
    assert "1 GiB snapshot limit" in one_line_error(*simulate(tmp_path, "/dev/zero"))


def test_an_endless_stdin_stops_at_the_snapshot_limit(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", ENDLESS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as feed:
        try:
            result = simulate(tmp_path, "-", stream=feed.stdout)
        finally:
            feed.kill()
    assert "1 GiB snapshot limit" in one_line_error(*result)


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_non_utf8_stdin_is_named_with_its_position_whatever_the_locale(tmp_path: Path, locale: str) -> None:
    err = one_line_error(*simulate(tmp_path, "-", b"kind: List\nitems: []\n# caf\xe9\n", LC_ALL=locale))
    assert err.startswith("desched: cannot read -:3:6: invalid UTF-8 byte 0xe9"), err


NOT_SNAPSHOTS = [b"{}", b"", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", b"- 1\n- 2\n"]
SNAPSHOTS = [
    b'{"apiVersion": "v1", "kind": "List", "items": []}',
    b"kind: NodeList\nitems: []\n",
    b"apiVersion: v1\nkind: Node\nmetadata: {name: a}\n",
]


def test_a_snapshot_is_a_listing_or_an_object_simulate_reads_and_nothing_else_runs(tmp_path: Path) -> None:
    """``{}`` once ran as an empty cluster; an empty listing (what kubectl prints for nothing) still runs."""
    for text in SNAPSHOTS:
        code, _, err = simulate(tmp_path, "-", text)
        assert code == 0, (text, err)
    for text in NOT_SNAPSHOTS:
        assert "not a cluster snapshot" in one_line_error(*simulate(tmp_path, "-", text)), text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=24,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.dictionaries(st.sampled_from(["kind", "metadata", "spec", "a"]), JSON_VALUES), max_size=5))
def test_a_json_snapshot_reads_as_the_standard_library_decodes_it(tmp_path: Path, items: list[Any]) -> None:
    """Repeated strings are kept once (snapshot._one_copy_of_each_string): the objects are equal, in the same
    order, with the same types (``1``, ``1.0`` and ``true`` told apart)."""
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(text, encoding="utf-8")
    assert json.dumps(read_snapshot(str(snapshot))) == json.dumps(
        [item for item in json.loads(text)["items"] if isinstance(item, dict)]
    )


def test_a_generated_cluster_reads_the_same_from_json_and_yaml(tmp_path: Path) -> None:
    """The bench's clusters (every plugin has work) as JSON and as YAML, objects in the same order."""
    listing = {"apiVersion": "v1", "kind": "List", "items": generate(12, 6, pools=True)}
    as_json, as_yaml = tmp_path / "cluster.json", tmp_path / "cluster.yaml"
    as_json.write_text(json.dumps(listing), encoding="utf-8")
    as_yaml.write_text(yaml.safe_dump(listing, sort_keys=False), encoding="utf-8")
    assert json.dumps(read_snapshot(str(as_json))) == json.dumps(read_snapshot(str(as_yaml)))
