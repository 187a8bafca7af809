"""``desched render FILE``: print the DeschedulerPolicy the Kube Descheduler Operator generates for a CR.

The output is what the operator writes into ConfigMap ``cluster`` key ``policy.yaml``, keys sorted as Kubernetes'
YAML marshalling sorts them. Exit 0 when every KubeDescheduler rendered; 2 (one ``desched:`` line on stderr) when
the file cannot be read or parsed, holds no KubeDescheduler, or the operator would refuse it.

A policy that reads Prometheus (a KubeVirt profile, ``devActualUtilizationProfile``) holds the URL of route
``openshift-monitoring/prometheus-k8s``, which the operator reads from the cluster. Without ``--prometheus-host`` the
policy is still printed, with a placeholder host, and a note on stderr says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from desched.errors import InputError, PolicyRefused
from desched.openshift.render import Environment, RenderError, render

__all__ = ["RENDER", "RenderCommand", "dump", "run"]


def _plain(value: Any) -> Any:
    """The policy as plain dicts, lists and scalars (no source-position subclasses)."""
    return json.loads(json.dumps(value))


def dump(policy: dict[str, Any]) -> str:
    """``policy`` as block YAML with sorted keys, like ``sigs.k8s.io/yaml``."""
    import yaml

    return str(yaml.safe_dump(_plain(policy), sort_keys=True, default_flow_style=False, allow_unicode=True))


def run(path: str, namespaces: list[str], prometheus_host: str | None) -> int:
    """Render every KubeDescheduler in ``path``; raises :class:`~desched.errors.InputError` when the file cannot be
    read or holds none, :class:`~desched.errors.PolicyRefused` when the operator refuses one."""
    from desched.gitops.documents import Shape, extract
    from desched.reading.sources import SourceError, read_text
    from desched.reading.yamlsrc import YamlError

    try:
        text = read_text(path)
    except SourceError as exc:
        raise InputError(f"{path}: {exc}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        extraction = extract(path, text)
    except YamlError as exc:
        raise InputError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
    found = [doc for doc in extraction.policies if doc.shape == Shape.KUBEDESCHEDULER]
    if not found:
        raise InputError(f"{path}: no KubeDescheduler (operator.openshift.io/v1) found")
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
            raise PolicyRefused(f"{path}:{line}:{column}: {doc.object}: {exc.message}") from None
        outputs.append(dump(rendering.policy))
        notes.extend(f"{path}: note: {doc.object}: {note}" for note in rendering.notes)
        if prometheus_host is None and "metricsProviders" in rendering.policy:
            notes.append(
                f"{path}: note: {doc.object}: the Prometheus URL https://{env.prometheus_host} is a placeholder (the "
                "operator uses the host of route openshift-monitoring/prometheus-k8s); pass --prometheus-host HOST"
            )
    sys.stdout.write("---\n".join(outputs))
    for note in notes:
        print(note, file=sys.stderr)
    return 0


class RenderCommand:
    """``desched render``."""

    help = "print the DeschedulerPolicy the OpenShift operator generates for a KubeDescheduler"
    description = (
        "Render every KubeDescheduler (operator.openshift.io/v1) of FILE the way the Kube Descheduler Operator "
        "does, and print the DeschedulerPolicy it writes into ConfigMap cluster, key policy.yaml."
    )
    epilog = "Exit codes: 0 rendered; 2 unreadable input, no KubeDescheduler, or a CR the operator refuses."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", metavar="FILE", help="file with a KubeDescheduler; - reads stdin")
        parser.add_argument(
            "--namespace",
            action="append",
            default=[],
            metavar="NS",
            help="a namespace that exists when the operator starts (repeatable; openshift-* ones are protected; "
            "the operator's own namespace is always there)",
        )
        parser.add_argument(
            "--prometheus-host",
            metavar="HOST",
            help="host of route openshift-monitoring/prometheus-k8s, for the Prometheus URL of KubeVirt profiles and "
            "devActualUtilizationProfile (without it that URL is a placeholder, and a note on stderr says so)",
        )

    def run(self, args: argparse.Namespace) -> int:
        return run(args.file, args.namespace, args.prometheus_host)


RENDER = RenderCommand()
