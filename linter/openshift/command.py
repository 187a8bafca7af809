"""``desched render FILE``: print the DeschedulerPolicy the Kube Descheduler Operator generates for a CR.

The output is what the operator writes into ConfigMap ``cluster`` key ``policy.yaml``, keys sorted as Kubernetes'
YAML marshalling sorts them. Exit 0 when every KubeDescheduler rendered; 2 (one ``desched:`` line on stderr) when
the file cannot be read or parsed, holds no KubeDescheduler, or the operator would refuse it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .render import Environment, RenderError, render

__all__ = ["RenderFailure", "run"]


class RenderFailure(Exception):
    """Printed as one ``desched:`` line; exit 2."""


def _plain(value: Any) -> Any:
    """The policy as plain dicts, lists and scalars (no source-position subclasses)."""
    return json.loads(json.dumps(value))


def dump(policy: dict[str, Any]) -> str:
    """``policy`` as block YAML with sorted keys, like ``sigs.k8s.io/yaml``."""
    import yaml

    return str(yaml.safe_dump(_plain(policy), sort_keys=True, default_flow_style=False, allow_unicode=True))


def run(path: str, namespaces: list[str], prometheus_host: str | None) -> int:
    """Render every KubeDescheduler in ``path``; raises :class:`RenderFailure` on any error."""
    from ..documents import extract
    from ..sources import SourceError, read_text
    from ..yamlsrc import YamlError

    try:
        text = read_text(path)
    except SourceError as exc:
        raise RenderFailure(f"{path}: {exc}") from None
    except OSError as exc:
        raise RenderFailure(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        extraction = extract(path, text)
    except YamlError as exc:
        raise RenderFailure(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
    found = [doc for doc in extraction.policies if doc.shape == "kubedescheduler"]
    if not found:
        raise RenderFailure(f"{path}: no KubeDescheduler (operator.openshift.io/v1) found")
    defaults = Environment()
    env = Environment(
        tuple(namespaces) if namespaces else defaults.namespaces, prometheus_host or defaults.prometheus_host
    )
    outputs: list[str] = []
    notes: list[str] = []
    for doc in found:
        try:
            rendering = render(doc.root, env)
        except RenderError as exc:
            line, column = doc.position(exc.path)
            raise RenderFailure(f"{path}:{line}:{column}: {doc.object}: {exc.message}") from None
        outputs.append(dump(rendering.policy))
        notes.extend(f"{path}: note: {doc.object}: {note}" for note in rendering.notes)
    sys.stdout.write("---\n".join(outputs))
    for note in notes:
        print(note, file=sys.stderr)
    return 0
