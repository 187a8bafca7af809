"""The shape of a chart record, as scripts/chart-records writes it from the chart at one ``descheduler-helm-chart-X``
tag (docs/helm-chart.md#9-the-chart-records). A values path is dotted (``leaderElection.enabled``); "truthy" is Go
template truth (false, 0, nil and empty strings, maps and lists are false). Only the fields desched reads are typed
here (the records hold more: the template's own text of a condition, what each helper computes, ...);
:mod:`desched.chart.record` reads them."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "IndexEntry",
    "LeaderElection",
    "LeaseRules",
    "MetricsRule",
    "Rbac",
    "Record",
    "Replicas",
    "Rule",
    "Style",
    "TemplateField",
    "WorkloadTemplate",
]

#: How a flag and its value are written: ``--flag`` then the value as the next word, or ``--flag=value``.
Style = Literal["words", "equals"]


class IndexEntry(TypedDict):
    """One chart version in ``index.json``: ``Chart.yaml``'s ``name`` and ``appVersion``, and the tag it was read
    at."""

    name: str
    app_version: str
    tag: str


class TemplateField(TypedDict):
    """How a template writes a field: from the values path ``value`` (``None``: from no value), ``literal`` (what the
    template writes itself: alone, or as the ``default`` fallback for a value that is not truthy), always or only
    when the value is truthy."""

    value: str | None
    literal: Any
    rendered: Literal["always", "when_truthy"]


class Replicas(TypedDict):
    """The Deployment's ``replicas``: the value at ``value`` when it is above ``used_above``, else ``otherwise``
    (always ``otherwise`` when ``value`` is ``None``); above ``used_above``, the template ``fail``s unless the
    values path ``fails_without`` is truthy (``None``: it never fails)."""

    value: str | None
    used_above: int | None
    otherwise: int
    fails_without: str | None


class Image(TypedDict):
    """``image: <repository>:<tag>``, the tag being ``tag_when_empty`` when the value is empty."""

    repository_value: str
    tag_value: str
    tag_when_empty: str


class PolicyFile(TypedDict):
    """``--policy-config-file`` and the file it names."""

    path: str
    style: Style


class Interval(TypedDict):
    """``--descheduling-interval``, from ``value`` (which the chart refuses to render without)."""

    value: str
    style: Style


class EnabledFlag(TypedDict):
    """``--leader-elect`` and the value it is written from (``default`` when that is not truthy, unless ``None``)."""

    flag: str
    value: str
    default: bool | None


class OptionFlag(TypedDict):
    """A leader election flag, written from the first truthy of ``values``, not at all when none is."""

    flag: str
    values: list[str]


class LeaderElection(TypedDict):
    """The leader election flags, included when every values path of ``rendered_when_truthy`` is truthy."""

    rendered_when_truthy: list[str]
    style: Style
    enabled_flag: EnabledFlag
    option_flags: list[OptionFlag]


class PolicyVolume(TypedDict):
    """The policy volume: where it is mounted, and the helper naming its ConfigMap."""

    mount_path: str
    config_map_name: str


class WorkloadTemplate(TypedDict):
    """What ``templates/cronjob.yaml`` or ``templates/deployment.yaml`` writes. ``rendered_when_kind``: the ``kind``
    value the file is gated on, ``None`` for a file always rendered; a field that is ``None`` is not written (or
    does not apply to the kind); helpers (``service_account_name``, the policy volume's ConfigMap) are named by their
    ``define``."""

    rendered_when_kind: str | None
    api_version: TemplateField
    schedule: TemplateField | None
    concurrency_policy: str | None
    active_deadline_seconds: TemplateField | None
    replicas: Replicas | None
    priority_class_name: TemplateField
    service_account_name: str
    container_name: str
    image: Image
    command: TemplateField
    policy_config_file: PolicyFile
    descheduling_interval: Interval | None
    cmd_options_style: Literal["words", "truthy", "string"]
    leader_election: LeaderElection | None
    liveness_probe: TemplateField | None
    ports: TemplateField | None
    policy_volume: PolicyVolume


class Rule(TypedDict):
    """A ClusterRole rule."""

    apiGroups: list[str]
    resources: list[str]
    verbs: list[str]


class LeaseRules(TypedDict):
    """The Lease rules, rendered when ``rendered_when_truthy`` is: one on any Lease, one on the Lease ``lease_name``
    names."""

    rendered_when_truthy: str
    any_lease_rule: Rule
    named_lease_rule: Rule
    lease_name: TemplateField


class MetricsRule(TypedDict):
    """The metrics.k8s.io rule: granted when the values path ``when_truthy`` is truthy, or for an entry of the list
    at ``per_entry_of`` holding every key and value of ``entry_where``."""

    rule: Rule
    when_truthy: str | None
    per_entry_of: str | None
    entry_where: dict[str, Any] | None


class PodSecurityPolicyRule(TypedDict):
    """The PodSecurityPolicy ``use`` rule on the policy the helper ``resource_name`` names."""

    rendered_when_truthy: str
    rule: Rule
    resource_name: str


class Rbac(TypedDict):
    """``templates/clusterrole.yaml``: rendered when ``rendered_when_truthy`` is; its unconditional ``rules`` in the
    template's order, then the conditional ones (``None`` where the chart has none)."""

    rendered_when_truthy: str
    rules: list[Rule]
    lease_rules: LeaseRules | None
    metrics_rule: MetricsRule | None
    pod_security_policy_rule: PodSecurityPolicyRule | None


class ChartFacts(TypedDict):
    """The chart version (the tag's), and ``Chart.yaml``'s ``name`` and ``appVersion``."""

    version: str
    name: str
    app_version: str


class ValuesFacts(TypedDict):
    """``values.yaml`` whole, in its order (``defaults``), and every top-level value the chart reads
    (``known_keys``: values.yaml's, the templates' ``.Values.<key>``, and Helm's ``global``)."""

    defaults: dict[str, Any]
    known_keys: list[str]


class PolicyFacts(TypedDict):
    """``templates/configmap.yaml``: the default ``deschedulerPolicy`` (values.yaml's order) and
    ``deschedulerPolicyAPIVersion``, how the policy's ``apiVersion`` header is written, whether the template
    renders no ConfigMap when ``deschedulerPolicy`` is empty, and whether it passes the policy through ``tpl``."""

    default: dict[str, Any] | None
    api_version_default: str | None
    header_api_version: TemplateField
    empty_policy_renders_no_configmap: bool
    passes_through_tpl: bool


class Workloads(TypedDict):
    """The CronJob's template, and the Deployment's (``None`` where the chart has none)."""

    cronjob: WorkloadTemplate
    deployment: WorkloadTemplate | None


class Record(TypedDict):
    """One chart version's record, ``<version>.json``."""

    chart: ChartFacts
    values: ValuesFacts
    policy: PolicyFacts
    workload: Workloads
    rbac: Rbac
