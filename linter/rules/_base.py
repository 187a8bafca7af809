"""What a rule sees (:class:`Context`, and :class:`CheckedPolicy` in a repository) and yields (:class:`Hit`).

A rule module declares its metadata as module constants (``ID``, ``NAME``, ``SUMMARY``, ``RATIONALE``,
``REMEDIATION``, ``SEVERITY``, ``SCOPE``, ``EXAMPLES``, optionally ``OPTIONS`` with defaults and ``SEVERITY_NOTE``:
which findings take another severity than ``SEVERITY``, and when) and a generator ``check(ctx)`` that yields bare
:class:`Hit` values: a message and a path inside the policy. The engine adds rule ID, severity, file, line, column
and object, then applies suppression. Rules never print or read files.
"""

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.deployment.releases import Release
from desched.gitops.documents import PolicyDoc, Shape
from desched.gitops.wrappers import object_label
from desched.plugins import DISTRIBUTIONS, OPENSHIFT, UPSTREAM, Plugin
from desched.policy.structure import StructureProblem, check_structure
from desched.tree import Path, list_or_empty

if TYPE_CHECKING:
    from desched.linter.rules._thresholds import UtilizationArgs
    from desched.linter.rules._validation import LocatedError
    from desched.openshift.validate import Problem
    from desched.policy.effective import Effective
    from desched.policy.model import Policy

__all__ = ["DOCUMENT_KINDS", "CheckedPolicy", "Context", "DocumentKind", "Hit", "Path"]


class DocumentKind:
    """What a rule runs on (its ``RUNS_ON`` metadata); the engine selects rules by these, never by rule IDs."""

    FILE = "file"  # the file's bytes and YAML: findings made by the loader (DS001), no rule runs
    POLICY = "policy"  # a DeschedulerPolicy as written (raw, ConfigMap key, Helm values)
    CONVERTED = "converted"  # what a v1alpha1 policy becomes once converted, placed on the v1alpha1 lines
    RENDERED = "rendered"  # the policy the OpenShift operator renders from a KubeDescheduler, placed on the CR's lines
    KUBEDESCHEDULER = "kubedescheduler"  # an OpenShift KubeDescheduler resource itself
    REPOSITORY = "repository"  # every policy of the run with every workload, PDB, HPA and namespace at once
    DEPLOYMENT = "deployment"  # every container of the run that runs the descheduler (desched.deployment.runs)
    UNITS = "units"  # the run's deploy units, as desched told them apart (desched.gitops.units)
    DELIVERY = "delivery"  # the chart installs and applied policies of the run (desched.deployment.delivery)


DOCUMENT_KINDS = frozenset(value for key, value in vars(DocumentKind).items() if key.isupper())
V1ALPHA1 = "descheduler/v1alpha1"
V1ALPHA2 = "descheduler/v1alpha2"


class Hit(NamedTuple):
    """A rule's bare finding: ``path`` inside the policy; ``key`` points at the key rather than the value."""

    message: str
    path: Path = ()
    key: bool = False
    severity: str | None = None


class RepoHit(NamedTuple):
    """A repository rule's finding (DS4xx): it points at a workload or PDB in any file, so it carries its position."""

    file: str
    line: int
    column: int
    message: str
    object: str
    severity: str | None = None


class CheckedPolicy(NamedTuple):
    """One policy as the engine checked it: the document (chart values rendered as the chart renders them), the
    release it was checked against, and the policy it runs as (converted, rendered; computed once)."""

    doc: PolicyDoc
    release: Release
    effective: "Effective"


def _operator_policy(doc: PolicyDoc) -> bool:
    """Whether ``doc`` is the policy of the OpenShift operator's ConfigMap (``cluster`` in its namespace, key
    ``policy.yaml``); the operator's model is imported only for a ConfigMap's policy."""
    if doc.shape != Shape.CONFIGMAP:
        return False
    from desched.openshift.model import OPERATOR_NAMESPACE, POLICY_KEY, SINGLETON

    if doc.extra.get("data_key") != POLICY_KEY:
        return False
    return doc.object == object_label({"metadata": {"namespace": OPERATOR_NAMESPACE, "name": SINGLETON}}, "ConfigMap")


def _distribution_of(doc: PolicyDoc, chosen: str | None) -> str:
    """The descheduler build that runs ``doc``: OpenShift's for a KubeDescheduler and what the operator renders from
    it; else ``chosen`` (``--distribution``); else OpenShift's for the policy of the operator's ConfigMap (``cluster``
    in its namespace, key ``policy.yaml``) and upstream's for every other."""
    if doc.shape in (Shape.KUBEDESCHEDULER, Shape.RENDERED):
        return OPENSHIFT
    if chosen is not None:
        return chosen
    return OPENSHIFT if _operator_policy(doc) else UPSTREAM


class Context:
    """One policy document as rules see it: the tree as written (with positions), the typed model, and the views
    several rules share, each computed once (cached properties). ``distribution`` names the descheduler build the
    settings choose (``None``: inferred from the document); ``model``, when given, is the document's typed policy
    already decoded (the engine's derived documents: their :attr:`effective` policy)."""

    def __init__(
        self,
        doc: PolicyDoc,
        release: Release,
        options: Mapping[str, dict[str, Any]] | None = None,
        distribution: str | None = None,
        model: "Policy | None" = None,
    ) -> None:
        if model is not None:
            self.model = model
        self.doc = doc
        self.distribution = _distribution_of(doc, distribution)  # the descheduler build that runs the policy
        self.release = release  # the release that runs the policy, as deployed, and why desched believes so
        self.target = release.target  # the supported release checks run against
        self._options = options or {}

    def options(self, rule_id: str, defaults: dict[str, Any]) -> dict[str, Any]:
        return {**defaults, **self._options.get(rule_id, {})}

    @property
    def policy(self) -> dict[str, Any]:
        return self.doc.root

    @cached_property
    def declared(self) -> dict[str, Any]:
        """The policy with the apiVersion it is decoded with (Helm values keep theirs beside the policy)."""
        return {**self.policy, "apiVersion": self.doc.api_version}

    @property
    def api_version(self) -> Any:
        return self.doc.api_version

    @property
    def is_v1alpha1(self) -> bool:
        return bool(self.doc.api_version == V1ALPHA1)

    @property
    def is_kubedescheduler(self) -> bool:
        """True for OpenShift's KubeDescheduler resource (``policy`` is then the whole CR, not a policy)."""
        return self.doc.shape == Shape.KUBEDESCHEDULER

    @property
    def is_v1alpha2(self) -> bool:
        """True for a v1alpha2 document, and for one without apiVersion that has v1alpha2's shape."""
        if self.is_kubedescheduler:
            return False
        if self.doc.api_version == V1ALPHA2:
            return True
        return self.doc.api_version is None and "strategies" not in self.doc.root

    @property
    def plugins(self) -> Mapping[str, Plugin]:
        """The plugins the distribution that runs the policy registers, by name."""
        return DISTRIBUTIONS[self.distribution].plugins

    @cached_property
    def structure(self) -> list[StructureProblem]:
        return check_structure(self.policy, self.target, v1alpha1=self.is_v1alpha1, registry=self.plugins)

    @cached_property
    def model(self) -> "Policy":
        """The typed policy (:mod:`desched.policy.model`); meaningful for v1alpha2 documents."""
        from desched.policy.model import decode  # only rules that read the model pay for it

        return decode(self.policy, registry=self.plugins)

    @cached_property
    def effective(self) -> "Effective":
        """The policy the descheduler runs for this document (:func:`desched.policy.effective.effective_policy`),
        computed once: the engine lints it, the repository pass, the webhook and the executor read it."""
        from desched.policy.effective import derived, effective_policy

        written = None if derived(self.doc) else self.model
        return effective_policy(self.doc, self.target, self.plugins, written)

    @cached_property
    def _profiles(self) -> list[tuple[int, dict[str, Any]]]:
        profiles = self.policy.get("profiles")
        return [(index, profile) for index, profile in enumerate(list_or_empty(profiles)) if isinstance(profile, dict)]

    def profiles(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(index, profile)`` of each profile that is a mapping."""
        return iter(self._profiles)

    @cached_property
    def arg_errors(self) -> "list[LocatedError]":
        """Every upstream validation and constructor error of the document, in upstream order, with absolute paths
        (several rules report slices of it)."""
        from desched.linter.rules._validation import located_errors

        if not self.is_v1alpha2:
            return []
        return located_errors(self.policy, self.model, self.target, self.plugins, self.distribution)

    @cached_property
    def utilization_args(self) -> "list[UtilizationArgs]":
        """Every Low/HighNodeUtilization pluginConfig entry (enabled or not: upstream validates all)."""
        from desched.linter.rules._thresholds import collect_utilization_args

        return collect_utilization_args(self.model) if self.is_v1alpha2 else []

    @cached_property
    def openshift_problems(self) -> "list[Problem]":
        """The problems of a KubeDescheduler document (DS501-DS504 report slices of them)."""
        from desched.openshift.validate import problems

        return problems(self.policy)
