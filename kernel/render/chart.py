"""What the pinned descheduler chart renders from chart values, as the manifests ``desched render`` prints: the policy
ConfigMap, the descheduler's workload with its command line, and the RBAC (docs/helm-chart.md#11-desched-render).

The objects hold what desched's chart model renders (:mod:`desched.deployment.chartruns`, the fields the deployment
rules read), not every label and annotation of the chart's templates.
"""

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from desched.deployment.chartrender import ChartDoc

__all__ = ["ChartManifests", "chart_manifests"]


class ChartManifests(NamedTuple):
    """What one install renders: its ``objects`` in the order Helm installs them (ConfigMap, RBAC, workload),
    ``notes`` for the reader, and ``failures``: why the install fails (Helm refuses to render it: then ``objects``
    is empty; the API server rejects what it renders; the descheduler cannot read the policy it renders)."""

    objects: list[dict[str, Any]]
    notes: list[str]
    failures: list[str]


def chart_manifests(doc: "ChartDoc") -> ChartManifests:
    """What the chart of ``doc`` (the primary values source of an install) renders from the install's values."""
    from desched.deployment.chartruns import chart_documents, fullname

    chart = doc.chart
    rendered = chart_documents(doc.values, chart, doc.root, doc.release[0])
    notes = [f"chart {chart.version}, {doc.pinned}"]
    refused = dict(rendered.refused)
    if ("spec", "replicas") in refused:
        reason = refused[("spec", "replicas")]
        return ChartManifests([], notes, [f"Helm refuses to render chart {chart.version}: {reason}"])
    name, namespace = fullname(doc.values, chart.name, doc.release[0]), doc.release[1]
    objects: list[dict[str, Any]] = []
    failures = list(refused.values())
    if doc.no_policy and chart.renders_no_empty_policy:
        notes.append(
            f"no policy ConfigMap: deschedulerPolicy is empty, so the descheduler reads key policy.yaml of ConfigMap "
            f"{name}, which you provide beside the release"
        )
    else:
        objects.append(_configmap(doc, name, namespace))
        if doc.no_policy:
            failures.append("the policy.yaml the chart writes is not YAML the descheduler can read")
    if doc.unknown:
        shown = ", ".join(".".join(map(str, path)) for path in sorted(doc.unknown, key=str))
        notes.append(f"left as written, known only once Helm renders it (tpl): {shown}")
    objects.extend(rendered.rbac)
    if rendered.workload is not None:
        workload = rendered.workload
        if namespace is not None:
            workload["metadata"]["namespace"] = namespace
        objects.append(workload)
    else:
        notes.append(f"no workload: kind {doc.values.get('kind')!r} names neither CronJob nor Deployment")
    if rendered.rbac and namespace is not None:
        for subject in rendered.rbac[-1].get("subjects", []):
            subject["namespace"] = namespace
    return ChartManifests(objects, notes, failures)


def _configmap(doc: "ChartDoc", name: str, namespace: str | None) -> dict[str, Any]:
    """The ConfigMap ``templates/configmap.yaml`` writes: the ``apiVersion`` and ``kind`` header, then the policy
    as ``toYaml`` writes it (keys sorted), or the empty value itself."""
    import yaml

    body = yaml.safe_dump(_plain(doc.root), sort_keys=True, default_flow_style=False, allow_unicode=True)
    if doc.no_policy:
        body = _go_yaml(doc.values.get("deschedulerPolicy"))
    text = f'apiVersion: "{doc.api_version}"\nkind: "DeschedulerPolicy"\n{body.strip()}\n'
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"policy.yaml": text}}


def _go_yaml(value: Any) -> str:
    """An empty value as ``toYaml`` writes it (``null``, ``""``, ``false``, ``[]``, ``0``)."""
    import json

    return json.dumps(value)


def _plain(value: Any) -> Any:
    """``value`` as plain dicts, lists and scalars (no source-position subclasses)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
