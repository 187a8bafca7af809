"""The webhook and the CLI agree: for every fixture under tests/ and every example, ``desched lint`` exits 1 exactly
when the webhook denies the same object in enforce mode.

What the API server would send: a ConfigMap or KubeDescheduler file is sent as the object it decodes to; a raw
policy file is sent inside a ConfigMap (key ``policy.yaml``, the file's text verbatim). Files kubectl cannot send are
left out: not YAML, several documents, Helm values, and files whose YAML has duplicate keys outside the embedded
policy (kubectl refuses those).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from desched.webhook.decision import Options
from desched.webhook.review import decide

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    path
    for base in (ROOT / "tests", ROOT / "examples")
    for path in base.rglob("*")
    if path.suffix in (".yaml", ".yml") and path.is_file()
)


class _Strict(yaml.SafeLoader):
    """Refuses duplicate mapping keys, as kubectl's YAML decoder does."""


def _mapping(loader: _Strict, node: yaml.MappingNode) -> dict[Any, Any]:
    keys = [loader.construct_object(key) for key, _ in node.value]
    if len(keys) != len(set(map(repr, keys))):
        raise yaml.YAMLError("duplicate key")
    return loader.construct_mapping(node)


_Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _sent(path: Path) -> dict[str, Any] | None:
    """The object the API server would send for ``path``, or None when kubectl could not send it."""
    try:
        text = path.read_text(encoding="utf-8")
        documents = [doc for doc in yaml.load_all(text, Loader=_Strict) if doc is not None]
    except (UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        return None
    doc = documents[0]
    if doc.get("kind") in ("ConfigMap", "KubeDescheduler"):
        return doc
    if str(doc.get("apiVersion", "")).startswith("descheduler/"):
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "policy", "namespace": "default"},
            "data": {"policy.yaml": text},
        }
    return None


CASES = [(path, obj) for path in SOURCES if (obj := _sent(path)) is not None]


def test_the_walk_covers_the_fixtures() -> None:
    kinds = {obj["kind"] for _, obj in CASES}
    assert len(CASES) >= 50 and kinds == {"ConfigMap", "KubeDescheduler"}


@pytest.mark.parametrize(("path", "obj"), CASES, ids=[str(path.relative_to(ROOT)) for path, _ in CASES])
def test_the_webhook_denies_exactly_what_the_cli_fails(path: Path, obj: dict[str, Any], tmp_path: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["lint", "--no-config", "--alone", "--format", "json", str(path)])  # the object alone
    request = {"uid": "u", "kind": {"kind": obj["kind"]}, "operation": "CREATE", "object": obj}
    decision = decide(request, Options())
    assert code in (0, 1)
    assert decision.allowed == (code == 0), decision.message
