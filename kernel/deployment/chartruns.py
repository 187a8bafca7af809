"""What the descheduler chart deploys from a user's values, per chart version: its CronJob or Deployment with the
descheduler's command line, liveness probe, priority class and service account, and its ClusterRole and binding
(docs/helm-chart.md#8-the-descheduler-the-chart-deploys). The deployment rules (DS6xx) judge it as they judge a
workload written by hand, and each finding lands on the value that made the rendered field (:class:`ChartRun`).

What each template writes, and from which value, is the chart version's record (:mod:`desched.chart.schema`): this
module renders it over the user's values coalesced with the chart's ``values.yaml``. Only what the deployment rules
read is rendered.
"""

import copy
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.chart.gotemplate import go_text, truthy
from desched.chart.record import ChartRelease, values_at
from desched.chart.values import coalesce
from desched.gitops.documents import CHART_VALUES, HELM_POLICY_KEY
from desched.tree import Path, list_or_empty, mapping_or_empty

if TYPE_CHECKING:
    from desched.chart.schema import LeaderElection, MetricsRule, Replicas, Rule, Style, TemplateField, WorkloadTemplate
    from desched.deployment.chartrender import ChartDoc
    from desched.deployment.runs import DeschedulerRun

__all__ = ["ChartRun", "chart_documents", "chart_run", "fullname"]


class ChartRun(NamedTuple):
    """The documents the chart renders for one install: its workload (none when ``kind`` names neither), its RBAC
    objects, ``origins``: each path of the workload mapped to the values path that renders it (``()``: the chart's
    template itself), and ``whole``: the workload paths that copy their values subtree whole (``toYaml``).
    :meth:`values_path` reads them. ``refused``: why the install fails before anything runs (Helm fails the render,
    or the API server rejects what it renders), by the workload path it is about."""

    workload: dict[str, Any] | None
    rbac: list[dict[str, Any]]
    origins: dict[Path, Path]
    whole: frozenset[Path]
    refused: dict[Path, str]

    def values_path(self, path: Path) -> Path:
        """The values path behind the workload's ``path``: that of its nearest mapped ancestor, followed by the
        rest of ``path`` when the ancestor copies a values subtree whole (``livenessProbe``)."""
        for end in range(len(path), -1, -1):
            found = self.origins.get(path[:end])
            if found is not None:
                return (*found, *path[end:]) if path[:end] in self.whole else found
        return ()


class _Render:
    """One rendering of a chart version's templates: the merged ``values``, what each helper ``define`` renders,
    and the origins of the fields written so far."""

    def __init__(self, values: Mapping[str, Any], helpers: Mapping[str, str]) -> None:
        self.values, self.helpers = values, helpers
        self.origins: dict[Path, Path] = {}
        self.whole: set[Path] = set()
        self.refused: dict[Path, str] = {}

    def field(self, path: Path, source: "TemplateField", *, whole: bool = False) -> Any:
        """What ``source`` writes at the workload's ``path`` (``None``: nothing), its origin noted; ``whole``: the
        template copies the value's subtree (``toYaml``)."""
        self.origins[path] = _values_path(source["value"])
        if whole and source["value"] is not None:
            self.whole.add(path)
        return _written(self.values, source)

    def copy(self, target: dict[str, Any], path: Path, source: "TemplateField | None") -> None:
        """Set the key ending ``path`` in ``target`` (the object at ``path``'s parent) to what ``source`` copies
        whole (``toYaml``); an empty or null value, or no ``source`` (the template has no such field), sets
        nothing."""
        value = self.field(path, source, whole=True) if source is not None else None
        if truthy(value):
            target[str(path[-1])] = copy.deepcopy(value)  # the values may hold the chart's shared defaults


def chart_documents(
    values: Mapping[str, Any], chart: ChartRelease, policy: Mapping[str, Any], release: str | None = None
) -> ChartRun:
    """What ``chart`` renders from the user's merged ``values`` (the chart's defaults coalesced under them) around
    the rendered ``policy`` (``deschedulerPolicy``, which decides the metrics rule), for the release named
    ``release`` (``None``: not known)."""
    # read, never changed: the chart's defaults are shared here, and copied only where a template copies a subtree
    merged = coalesce(values, chart.values_defaults, shared=True).values
    name = fullname(merged, chart.name, release)
    helpers = {"descheduler.fullname": name, "descheduler.serviceAccountName": _account(merged, name)}
    render = _Render(merged, helpers)
    workload = None
    for kind, facts in chart.workloads:
        if facts["rendered_when_kind"] in (None, merged.get("kind")):
            workload = (_deployment if kind == "Deployment" else _cronjob)(render, facts)
            break
    rbac = _rbac(render, chart, {**merged, HELM_POLICY_KEY: policy})
    return ChartRun(workload, rbac, render.origins, frozenset(render.whole), render.refused)


def chart_run(doc: "ChartDoc", policy: Mapping[str, Any] | None) -> "DeschedulerRun | None":
    """The descheduler the chart of ``doc`` (a rendered source of chart values, the install's primary one) runs,
    reading the v1alpha2 ``policy``, with the chart's RBAC objects and findings placed on the values behind each
    rendered field; ``None`` when the chart renders no workload."""
    from desched.deployment.runs import descheduler_runs

    rendered = chart_documents(doc.values, doc.chart, doc.root, doc.release[0])
    run = next(descheduler_runs([(doc.file, rendered.workload)]), None) if rendered.workload else None
    if run is None:
        return None

    def where(path: Path) -> tuple[str, int, int]:
        return _written_at(doc, rendered.values_path(path))

    how = "assumed: no chart version is pinned" if doc.assumed else doc.pinned
    title = f"the {run.kind} of chart {doc.chart.version}, {how}"

    def naming(path: Path) -> str | None:
        return ".".join(str(part) for part in rendered.values_path(path)) or None

    rbac = tuple((doc.file, obj) for obj in rendered.rbac)
    refused = tuple(rendered.refused.items())
    policy = None if doc.no_policy else policy  # the ConfigMap the descheduler reads is not the chart's
    return run._replace(locator=where, title=title, policy=policy, naming=naming, rbac=rbac, refused=refused)


def _written_at(doc: "ChartDoc", path: Path) -> tuple[str, int, int]:
    """Where the value at values ``path`` (or its nearest ancestor) is written: in the last source of the install
    that sets it, else at the chart pin (a chart default, or the template itself)."""
    for end in range(len(path), 0, -1):
        layer = doc.values_writer(path[:end])
        if layer is not None:
            return (layer.file, *layer.position((CHART_VALUES, *path[:end]), key=True))
    if doc.pin is not None:
        return (doc.file, *doc.pin)
    return (doc.file, *doc.source.position((CHART_VALUES,)))


def fullname(values: Mapping[str, Any], chart_name: str, release: str | None = None) -> str:
    """The chart's ``descheduler.fullname`` for the merged ``values`` and the ``release`` name: ``fullnameOverride``,
    else the release name when it contains ``nameOverride`` (default: the chart's name), else ``<release>-<name>``,
    cut to 63 characters; for a release desched does not know, it takes one that contains the name."""
    override = values.get("fullnameOverride")
    if isinstance(override, str) and override:
        return override[:63].removesuffix("-")
    name = values.get("nameOverride")
    name = name if isinstance(name, str) and name else chart_name
    if release is None or name in release:
        return (release or chart_name)[:63].removesuffix("-")
    return f"{release}-{name}"[:63].removesuffix("-")


def _account(values: Mapping[str, Any], fullname: str) -> str:
    # descheduler.serviceAccountName: serviceAccount.name, else the fullname when the chart creates the account,
    # else "default"
    account = mapping_or_empty(values.get("serviceAccount"))
    name = account.get("name")
    if isinstance(name, str) and name:
        return name
    return fullname if truthy(account.get("create")) else "default"


def _values_path(dotted: str | None) -> Path:
    return tuple(dotted.split(".")) if dotted else ()


def _written(values: Mapping[str, Any], source: "TemplateField") -> Any:
    """What ``source`` writes from ``values``: the template's literal, the value (``None`` when it is not truthy and
    written only then), or the value with the literal as its ``default``."""
    if source["value"] is None:
        return source["literal"]
    value = values_at(values, source["value"])
    if truthy(value):
        return value
    if source["literal"] is not None:
        return source["literal"]
    return None if source["rendered"] == "when_truthy" else value


def _deployment(render: _Render, facts: "WorkloadTemplate") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if facts["replicas"] is not None:
        spec["replicas"] = _replicas(render, facts["replicas"])
    spec["template"] = {"spec": _pod(render, facts, ("spec", "template", "spec"))}
    return _object(render, "Deployment", facts, spec)


def _object(render: _Render, kind: str, facts: "WorkloadTemplate", spec: dict[str, Any]) -> dict[str, Any]:
    """The workload of ``kind`` around its ``spec``, named by the chart's fullname."""
    api_version = render.field(("apiVersion",), facts["api_version"])
    name = render.helpers["descheduler.fullname"]
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": spec}


def _replicas(render: _Render, facts: "Replicas") -> int:
    """``replicas``: the value when the template's condition holds (it is above ``used_above``), else the
    template's own number."""
    render.origins[("spec", "replicas")] = _values_path(facts["value"])
    value = values_at(render.values, facts["value"]) if facts["value"] else None
    above, needed = facts["used_above"], facts["fails_without"]
    if isinstance(value, int) and not isinstance(value, bool) and above is not None and value > above:
        if needed is not None and not truthy(values_at(render.values, needed)):
            render.refused[("spec", "replicas")] = (
                f"the chart's template fails the render for replicas above {above} unless {needed} is true"
            )
        return value
    return facts["otherwise"]


def _cronjob(render: _Render, facts: "WorkloadTemplate") -> dict[str, Any]:
    job: dict[str, Any] = {}
    if facts["active_deadline_seconds"] is not None:
        deadline_path: Path = ("spec", "jobTemplate", "spec", "activeDeadlineSeconds")
        deadline = render.field(deadline_path, facts["active_deadline_seconds"])
        if deadline is not None:
            job["activeDeadlineSeconds"] = deadline
    job["template"] = {"spec": _pod(render, facts, ("spec", "jobTemplate", "spec", "template", "spec"))}
    spec: dict[str, Any] = {}
    if facts["schedule"] is not None:
        spec["schedule"] = render.field(("spec", "schedule"), facts["schedule"])
    spec.update(concurrencyPolicy=facts["concurrency_policy"], jobTemplate={"spec": job})
    return _object(render, "CronJob", facts, spec)


_POLICY_VOLUME = "policy-volume"  # the name every template gives it (scripts/chart-records reads it with the mount)


def _pod(render: _Render, facts: "WorkloadTemplate", pod_path: Path) -> dict[str, Any]:
    """The pod spec the workload's template writes at ``pod_path``."""
    container_path: Path = (*pod_path, "containers", 0)
    words = list(_args(render.values, facts))
    for index, (word, origin, bare) in enumerate(words):
        render.origins[(*container_path, "args", index)] = origin
        read = _yaml_type(word) if bare else "string"
        if read != "string":
            render.refused[(*container_path, "args", index)] = (
                f"the chart writes the argument {word or '(empty)'} unquoted, which YAML reads as a {read}: the "
                "API server rejects a container whose args are not strings, so the install fails"
            )
    image = facts["image"]
    tag = values_at(render.values, image["tag_value"])
    render.origins[(*container_path, "image")] = _values_path(image["tag_value"])
    repository = go_text(values_at(render.values, image["repository_value"]))
    container: dict[str, Any] = {
        "name": facts["container_name"],
        "image": f"{repository}:{go_text(tag) if truthy(tag) else image['tag_when_empty']}",
    }
    render.copy(container, (*container_path, "command"), facts["command"])
    container["args"] = [word for word, _, _ in words]
    render.copy(container, (*container_path, "ports"), facts["ports"])
    volume = facts["policy_volume"]
    container["volumeMounts"] = [{"mountPath": volume["mount_path"], "name": _POLICY_VOLUME}]
    render.copy(container, (*container_path, "livenessProbe"), facts["liveness_probe"])
    pod: dict[str, Any] = {
        "serviceAccountName": render.helpers[facts["service_account_name"]],
        "containers": [container],
        "volumes": [{"name": _POLICY_VOLUME, "configMap": {"name": render.helpers[volume["config_map_name"]]}}],
    }
    render.origins[(*pod_path, "serviceAccountName")] = ("serviceAccount", "name")
    priority = render.field((*pod_path, "priorityClassName"), facts["priority_class_name"])
    if priority is not None:
        pod["priorityClassName"] = priority
    return pod


def _args(values: Mapping[str, Any], facts: "WorkloadTemplate") -> Iterator[tuple[str, Path, bool]]:
    """The container's arguments as the chart's template writes them, each with the values path behind it and
    whether the template writes it bare (a value as a list item of its own, unquoted: ``- {{ value }}``)."""
    config = facts["policy_config_file"]
    yield from _flag("--policy-config-file", config["path"], (), config["style"])
    interval = facts["descheduling_interval"]
    if interval is not None:
        value = values_at(values, interval["value"])
        if value is not None and value != "":  # else the chart's `required` refuses to render
            origin = _values_path(interval["value"])
            yield from _flag("--descheduling-interval", go_text(value), origin, interval["style"])
    options = mapping_or_empty(values.get("cmdOptions"))
    style = facts["cmd_options_style"]
    for key in sorted(options):
        value, origin = options[key], ("cmdOptions", key)
        if style == "string":
            yield (f"--{key}" if value is None else f"--{key}={go_text(value)}"), origin, False
        elif style == "truthy":
            yield (f"--{key}={go_text(value)}" if truthy(value) else f"--{key}"), origin, False
        else:
            yield f"--{key}", origin, False
            if truthy(value):
                yield go_text(value), origin, False  # quoted
    if facts["leader_election"] is not None:
        yield from _leader_election(values, facts["leader_election"])


def _leader_election(values: Mapping[str, Any], election: "LeaderElection") -> Iterator[tuple[str, Path, bool]]:
    if not all(truthy(values_at(values, path)) for path in election["rendered_when_truthy"]):
        return
    enabled = election["enabled_flag"]
    value = values_at(values, enabled["value"])
    if enabled["default"] is not None and not truthy(value):
        value = enabled["default"]
    yield from _flag(enabled["flag"], go_text(value), _values_path(enabled["value"]), election["style"])
    for option in election["option_flags"]:
        found = [(path, values_at(values, path)) for path in option["values"]]
        written = [(path, option_value) for path, option_value in found if truthy(option_value)]
        if written:
            path, option_value = written[0]
            yield from _flag(option["flag"], go_text(option_value), _values_path(path), election["style"])


def _flag(flag: str, value: str, origin: Path, style: "Style") -> Iterator[tuple[str, Path, bool]]:
    """``flag`` and its ``value`` as the template writes them: two list items, the value's unquoted (the records'
    ``words`` forms), or one ``--flag=value`` item."""
    if style == "words":
        yield flag, origin, False
        yield value, origin, True
    else:
        yield f"{flag}={value}", origin, False


def _yaml_type(word: str) -> str:
    """What YAML reads a bare list item ``word`` as: ``string``, or the type that takes its place (``boolean``,
    ``number``, ``null``), as the API server's YAML decoder (YAML 1.1 scalars) reads it."""
    import yaml  # only the oldest charts write bare values

    try:
        value = yaml.safe_load(word)
    except yaml.YAMLError:
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, (int, float)) else "string"


def _rbac(render: _Render, chart: ChartRelease, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ClusterRole and its binding, from ``values`` with the rendered policy in place (nothing without the
    role's gate)."""
    facts = chart.rbac
    if not truthy(values_at(values, facts["rendered_when_truthy"])):
        return []
    rules = [_rule(rule) for rule in facts["rules"]]
    leases = facts["lease_rules"]
    if leases is not None and truthy(values_at(values, leases["rendered_when_truthy"])):
        name = _written(values, leases["lease_name"])
        rules += [_rule(leases["any_lease_rule"]), _rule(leases["named_lease_rule"], resourceNames=[name])]
    if facts["metrics_rule"] is not None and _metrics_granted(facts["metrics_rule"], values):
        rules.append(_rule(facts["metrics_rule"]["rule"]))
    psp = facts["pod_security_policy_rule"]
    if psp is not None and truthy(values_at(values, psp["rendered_when_truthy"])):
        rules.append(_rule(psp["rule"], resourceNames=[render.helpers[psp["resource_name"]]]))
    fullname, account = render.helpers["descheduler.fullname"], render.helpers["descheduler.serviceAccountName"]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": fullname}}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": fullname},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": fullname},
        "subjects": [{"kind": "ServiceAccount", "name": account}],
    }
    return [{**role, "rules": rules}, binding]


def _metrics_granted(metrics: "MetricsRule", values: Mapping[str, Any]) -> bool:
    if metrics["when_truthy"] is not None:
        return truthy(values_at(values, metrics["when_truthy"]))
    listed = metrics["per_entry_of"]
    entries = list_or_empty(values_at(values, listed)) if listed is not None else []
    wanted = (metrics["entry_where"] or {}).items()
    return any(all(mapping_or_empty(entry).get(key) == value for key, value in wanted) for entry in entries)


def _rule(rule: "Rule", **more: list[Any]) -> dict[str, Any]:
    """A copy of ``rule`` (the record's is shared), with ``more`` fields."""
    copied = {"apiGroups": list(rule["apiGroups"]), "resources": list(rule["resources"]), "verbs": list(rule["verbs"])}
    return {**copied, **more}
