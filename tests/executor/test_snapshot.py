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
from desched.errors import UsageError
from desched.executor.snapshot import _fast_json, read_snapshot
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


# -- the JSON path without a text copy (msgspec) and the standard library's: the same objects, the same errors --------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
ITEMS = st.lists(
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["Pod", "Node", "PodDisruptionBudget", "ConfigMap"])},
        optional={"metadata": st.dictionaries(st.sampled_from(["name", "uid", "labels"]), JSON_VALUES)},
    ).flatmap(
        lambda head: st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3).map(lambda rest: {**head, **rest})
    ),
    max_size=5,
)


def _read_both(tmp_path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """What :func:`read_snapshot` makes of ``data``, with msgspec and without it, as comparable text (objects in
    order, types told apart: ``1``, ``1.0`` and ``true`` differ) or the error's message."""
    snapshot_file = tmp_path / "snapshot.json"
    snapshot_file.write_bytes(data)

    def outcome() -> str:
        try:
            return json.dumps(read_snapshot(str(snapshot_file)))
        except UsageError as error:
            return f"error: {error}"

    fast = outcome()
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "msgspec", None)  # import msgspec raises ImportError
        slow = outcome()
    return fast, slow


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=ITEMS, ensure_ascii=st.booleans(), indent=st.sampled_from([None, 2]))
def test_msgspec_decodes_a_json_snapshot_into_the_objects_the_standard_library_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: list[Any], ensure_ascii: bool, indent: int | None
) -> None:
    document = {"apiVersion": "v1", "kind": "List", "items": items}
    data = json.dumps(document, ensure_ascii=ensure_ascii, indent=indent).encode()
    assert _fast_json(bytearray(data)) is not None  # the fast path was taken
    fast, slow = _read_both(tmp_path, data, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize(
    "data",
    [
        b'{"kind": "List", "items": [{"kind": "Pod", "spec": {"x": NaN, "y": 1e400}}]}',  # msgspec refuses both
        b'{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "\\ud800"}}]}',  # a lone surrogate
        b'\xef\xbb\xbf{"kind": "List", "items": []}',  # a UTF-8 BOM
        '\ufeff{"kind": "List", "items": []}'.encode("utf-16"),
        b' \n{"kind": "List", "items": [}',  # invalid: the standard library's line and column
        b'{"kind": "List", "items": ["caf\xe9"]}',  # not UTF-8
        b'{"kind": "List", "items": []}\x00',
        b"\x00" + b" " * 10 + b"{}",
        b"{}",
        b'{"kind": "List", "items": [1, {"kind": "Node", "metadata": {"name": "a"}}]}',
    ],
)
def test_what_msgspec_refuses_the_standard_library_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    fast, slow = _read_both(tmp_path, data, monkeypatch)
    assert fast == slow


def test_a_generated_cluster_reads_the_same_from_json_and_yaml(tmp_path: Path) -> None:
    """The bench's clusters (every plugin has work) as JSON (msgspec) and as YAML (the standard path)."""
    objects = generate(12, 6, pools=True)
    as_json, as_yaml = tmp_path / "cluster.json", tmp_path / "cluster.yaml"
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}), encoding="utf-8")
    as_yaml.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}, sort_keys=False), encoding="utf-8"
    )
    assert _fast_json(bytearray(as_json.read_bytes())) is not None
    assert json.dumps(read_snapshot(str(as_json))) == json.dumps(read_snapshot(str(as_yaml)))
