"""``desched render FILE``: print what FILE's descheduler inputs render to, as the tool that runs them renders them.

* A KubeDescheduler (operator.openshift.io/v1): the DeschedulerPolicy the Kube Descheduler Operator writes into
  ConfigMap ``cluster`` key ``policy.yaml``, keys sorted as Kubernetes' YAML marshalling sorts them. A policy that
  reads Prometheus (a KubeVirt profile, ``devActualUtilizationProfile``) holds the URL of route
  ``openshift-monitoring/prometheus-k8s``, which the operator reads from the cluster; without ``--prometheus-host``
  the policy is printed with a placeholder host, and a note on stderr says so.
* Chart inputs (a values file, a Flux HelmRelease, an Argo CD Application with a helm source, a kustomization's
  ``helmCharts``): what the pinned chart version renders from each install's values, as YAML documents: the policy
  ConfigMap, the RBAC and the descheduler's workload (:mod:`desched.render.chart`). Notes on stderr say which chart
  version renders them and what desched leaves as written.

Exit 0 when everything rendered and would install; 1 when an install fails (Helm refuses to render it, the API
server would reject what it renders, or the descheduler cannot read the policy it renders: one ``FILE: error:``
line on stderr each, and what did render is printed); 2 (one ``desched:`` line on stderr) when the file cannot be
read or parsed, holds nothing to render, names a chart version desched has no record of, or holds a
KubeDescheduler the operator would refuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from desched.errors import EXIT_FINDINGS, EXIT_OK, InputError, PolicyRefused

if TYPE_CHECKING:
    from desched.gitops.documents import Extraction, PolicyDoc
    from desched.render.chart import ChartManifests

__all__ = ["RENDER", "RenderCommand", "dump", "run"]


def _plain(value: Any) -> Any:
    """``value`` as plain dicts, lists and scalars (no source-position subclasses)."""
    return json.loads(json.dumps(value))


def dump(document: dict[str, Any]) -> str:
    """``document`` as block YAML with sorted keys, like ``sigs.k8s.io/yaml``; a string of several lines (a
    ConfigMap's policy file) as a literal block."""
    import yaml

    class Dumper(yaml.SafeDumper):
        """PyYAML's safe dumper, writing strings of several lines as ``|`` blocks."""

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    Dumper.add_representer(str, text)
    dumped = yaml.dump(_plain(document), Dumper=Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True)
    return str(dumped)


def _extracted(path: str) -> tuple[str, Extraction]:
    """The text of ``path`` and what it holds; :class:`~desched.errors.InputError` when it cannot be read."""
    from desched.gitops.documents import extract
    from desched.reading.sources import SourceError, read_text
    from desched.reading.yamlsrc import YamlError

    try:
        text = read_text(path)
    except SourceError as exc:
        raise InputError(f"{path}: {exc}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return text, extract(path, text)
    except YamlError as exc:
        raise InputError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None


def run(path: str, namespaces: list[str], prometheus_host: str | None) -> int:
    """Render every KubeDescheduler and chart install of ``path``; raises :class:`~desched.errors.InputError` when
    the file cannot be read or holds neither, :class:`~desched.errors.PolicyRefused` when the operator refuses a CR
    or a pinned chart version has no record."""
    from desched.gitops.documents import Shape, extract
    from desched.gitops.wrappers import flux_sources, installs

    text, extraction = _extracted(path)
    context = _context(path)
    flux = [source for _, found in context for doc in found.others for source in flux_sources(doc)]
    if flux:  # a HelmRelease may name the chart through a Flux source of its unit only
        extraction = extract(path, text, flux=flux)
    operator = [doc for doc in extraction.policies if doc.shape == Shape.KUBEDESCHEDULER]
    charted = [doc for doc in extraction.policies if doc.shape == Shape.HELM]
    wrappers = [doc for doc in extraction.wrappers + extraction.others if any(installs(doc, path))]
    if not operator and not charted and not wrappers:
        raise InputError(
            f"{path}: nothing to render: no KubeDescheduler (operator.openshift.io/v1) and no descheduler chart "
            "values, HelmRelease, Argo CD Application or kustomize helmCharts entry"
        )
    outputs: list[str] = []
    notes: list[str] = []
    failures: list[str] = []
    if operator:
        outputs += _operator(path, operator, namespaces, prometheus_host, notes)
    if charted or wrappers:
        for found in _charts(path, extraction, wrappers, context):
            outputs += [dump(document) for document in found.objects]
            notes += [f"{path}: note: {note}" for note in found.notes]
            failures += [f"{path}: error: {failure}" for failure in found.failures]
    sys.stdout.write("---\n".join(outputs))
    for line in notes + failures:
        print(line, file=sys.stderr)
    return EXIT_FINDINGS if failures else EXIT_OK


def _operator(
    path: str, found: list[PolicyDoc], namespaces: list[str], prometheus_host: str | None, notes: list[str]
) -> list[str]:
    """The policy the operator generates for each KubeDescheduler of ``found``, as YAML texts."""
    from desched.openshift.render import Environment, RenderError, render

    defaults = Environment()
    env = Environment(
        tuple(namespaces) if namespaces else defaults.namespaces, prometheus_host or defaults.prometheus_host
    )
    outputs: list[str] = []
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
    return outputs


def _context(path: str) -> list[tuple[str, Extraction]]:
    """The other files of the deploy units that hold ``path`` in its repository, read (those that cannot be are
    left out): where a chart's pin, its Flux source and the release deployed with it may be written."""
    from desched.gitops.context import context_files

    if path == "-":
        return []
    found = []
    for file in context_files([path], (), None, None):
        try:
            found.append((file, _extracted(file)[1]))
        except InputError:
            continue
    return found


def _charts(
    path: str, extraction: Extraction, wrappers: list[Any], context: list[tuple[str, Extraction]]
) -> list[ChartManifests]:
    """What the chart renders for each install of ``path`` (its chart values, and the ``wrappers`` that install
    the chart), with the values files a kustomization's ``helmCharts`` names, read beside it, and the release the
    ``context`` (the other files of its units) deploys, as ``desched lint`` judges it."""
    from desched.deployment.chartrender import ChartDoc, rendered
    from desched.deployment.releases import Deployments, release_of
    from desched.gitops.documents import Shape
    from desched.gitops.wrappers import installs
    from desched.render.chart import chart_manifests

    policies = list(extraction.policies)
    for wrapper in wrappers:
        for install in installs(wrapper, path):
            files = [source.where[0] for source in install.sources if source.kind == "file"]
            policies += [doc for file in files for doc in _extracted(file)[1].policies]
    documents = [(path, doc) for doc in extraction.others + extraction.wrappers]
    documents += [(file, doc) for file, found in context for doc in found.others + found.wrappers]
    deployments = Deployments(documents, policies + [doc for _, found in context for doc in found.policies])
    found: list[ChartManifests] = []
    for doc in policies:
        if doc.shape != Shape.HELM:
            continue
        chart_doc = rendered(doc, deployments, release_of(doc, deployments))
        if doc.unreached is not None:
            print(f"{path}: note: {doc.object}: not rendered: {doc.unreached}", file=sys.stderr)
        elif not isinstance(chart_doc, ChartDoc):
            version = doc.extra.get("chart_version")
            raise PolicyRefused(f"{path}: {doc.object}: desched has no record of chart version {version}")
        elif chart_doc.primary:
            found.append(chart_manifests(chart_doc))
    return found


class RenderCommand:
    """``desched render``."""

    help = "print what a KubeDescheduler or the descheduler chart's values render to"
    description = (
        "Render FILE's descheduler inputs as the tool that runs them does: for a KubeDescheduler "
        "(operator.openshift.io/v1), the DeschedulerPolicy the Kube Descheduler Operator writes into ConfigMap "
        "cluster, key policy.yaml; for chart values (a values file, a Flux HelmRelease, an Argo CD Application, a "
        "kustomization's helmCharts), what the pinned chart version renders: the policy ConfigMap, the RBAC and "
        "the descheduler's workload with its arguments."
    )
    epilog = (
        "Exit codes: 0 rendered; 1 an install fails (Helm refuses to render it, the API server would reject it, or "
        "the descheduler cannot read its policy); 2 unreadable input, nothing to render, a chart version desched "
        "has no record of, or a CR the operator refuses."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", metavar="FILE", help="file to render; - reads stdin")
        parser.add_argument(
            "--namespace",
            action="append",
            default=[],
            metavar="NS",
            help="KubeDescheduler: a namespace that exists when the operator starts (repeatable; openshift-* ones "
            "are protected; the operator's own namespace is always there)",
        )
        parser.add_argument(
            "--prometheus-host",
            metavar="HOST",
            help="KubeDescheduler: host of route openshift-monitoring/prometheus-k8s, for the Prometheus URL of "
            "KubeVirt profiles and devActualUtilizationProfile (without it that URL is a placeholder, and a note on "
            "stderr says so)",
        )

    def run(self, args: argparse.Namespace) -> int:
        return run(args.file, args.namespace, args.prometheus_host)


RENDER = RenderCommand()
