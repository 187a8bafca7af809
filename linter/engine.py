"""The lint pipeline: read a file, find its policies, run every enabled rule, place and suppress findings.

:func:`lint_text` is pure (text in, findings out); :func:`lint_file` adds reading and turns unreadable bytes into
DS001 findings. The webhook lints what an admission request carries without making text of it: the text of each
ConfigMap data key that holds a policy (:func:`lint_configmap_key`), or the decoded object itself
(:func:`lint_documents`, findings placed by JSON pointer). File-level problems (bytes, YAML syntax, a ConfigMap key
that does not parse) are DS001 findings emitted here; everything else comes from rule modules. A template
(``*.yaml.tpl``, ``*.yml.tpl``, ``*.yaml.gotmpl``) is read with its actions neutralised
(:mod:`desched.linter.templates`), findings on their placeholders dropped, or is ``skipped`` (with the reason) when
it is not YAML that way.
"""

from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.deployment.releases import Deployments, Release, configured, newest, release_of
from desched.gitops.documents import (
    HELM_POLICY_KEY,
    DerivedDoc,
    Extraction,
    PolicyDoc,
    Shape,
    extract,
    extract_configmap_key,
)
from desched.gitops.policylimits import within_limits
from desched.gitops.wrappers import FluxSource
from desched.linter import rules as rule_registry
from desched.linter.finding import Finding, pointer
from desched.linter.rules._base import CheckedPolicy, Context, DocumentKind
from desched.linter.suppress import parse as parse_suppressions
from desched.reading.sources import SourceError, is_template, read_text
from desched.reading.yamlsrc import NodeBudget, NodeLimitError, YamlError, load_all

if TYPE_CHECKING:
    from desched.gitops.patches import UnitObjects
    from desched.gitops.units import DeployUnits
    from desched.linter.inventory import Repository
    from desched.linter.templates import Neutralized
    from desched.versions import KubernetesVersion
    from desched.workloads import PDB, Workload

__all__ = [
    "CheckedPolicy",
    "FileResult",
    "Settings",
    "UnitGroups",
    "check",
    "check_inventory",
    "deployment_findings",
    "lint_configmap_key",
    "lint_documents",
    "lint_file",
    "lint_repository",
    "lint_text",
    "read_file",
    "release_for",
]

_SYNTAX = "DS001"


class Settings(NamedTuple):
    """What to check: ``target`` is the release (``None``: inferred per policy, :func:`release_for`), set by
    ``target_source`` (how findings name it); ``distribution`` the descheduler build that runs the policies
    (``None``: inferred per policy, see :class:`~desched.linter.rules._base.Context`); ``clusters`` maps cluster
    names to path globs (relative to ``clusters_base``), replacing the repository's structure; ``kubernetes`` is the
    cluster's Kubernetes version (``None``: unknown, DS614 stays silent). Immutable: derive another with
    ``_replace``."""

    target: int | None = None
    disabled: AbstractSet[str] = frozenset()
    severities: Mapping[str, str] = {}  # read-only (Mapping): the shared default is never written
    options: Mapping[str, dict[str, Any]] = {}
    target_source: str = "--target-version"
    distribution: str | None = None
    clusters: Mapping[str, list[str]] | None = None
    clusters_base: str | None = None
    kubernetes: "KubernetesVersion | None" = None

    def enabled_rules(self, kind: str) -> list[ModuleType]:
        """Enabled rules that run on a document of ``kind`` (a :class:`~desched.linter.rules._base.DocumentKind`)."""
        return _enabled_rules(kind, frozenset(self.disabled))


_ENABLED: dict[tuple[str, frozenset[str]], list[ModuleType]] = {}


def _enabled_rules(kind: str, disabled: frozenset[str]) -> list[ModuleType]:
    """The rule modules running on ``kind`` but ``disabled``, in registry order (computed once per pair)."""
    found = _ENABLED.get((kind, disabled))
    if found is None:
        found = _ENABLED[(kind, disabled)] = [m for m in rule_registry.rules_for(kind) if m.ID not in disabled]
    return found


class FileResult:
    """The findings of one file, its text, the policies found (as read) and the other documents (workloads, ...);
    once :func:`check` ran, ``checked`` holds each policy as checked, in the order of ``policies``. For a template
    (:func:`desched.reading.sources.is_template`), ``template`` is its neutralised text, or ``skipped`` says why it
    was not linted."""

    __slots__ = ("checked", "file", "findings", "others", "policies", "skipped", "template", "text", "wrappers")

    def __init__(self, file: str, text: str = "") -> None:
        self.file = file
        self.text = text
        self.findings: list[Finding] = []
        self.policies: list[PolicyDoc] = []
        self.checked: list[CheckedPolicy] = []
        self.others: list[Any] = []
        self.wrappers: list[Any] = []  # the documents whose chart values are among the policies (their installs)
        self.template: Neutralized | None = None
        self.skipped: str | None = None

    def copy(self) -> "FileResult":
        """This result as read, before :func:`check`: to check it again against other releases."""
        other = FileResult(self.file, self.text)
        other.findings = list(self.findings)
        other.policies, other.others, other.wrappers = self.policies, self.others, self.wrappers
        other.template, other.skipped = self.template, self.skipped
        return other

    def runs(self) -> list[CheckedPolicy]:
        """The policies checked that run as such: of the values sources of one chart install, only the one that
        stands for the install; none the chart never receives."""
        return [run for run in self.checked if run.doc.reported_here(()) and run.doc.unreached is None]


def release_for(doc: PolicyDoc, settings: Settings, deployments: Deployments | None = None) -> Release:
    """The release ``doc`` is checked against, and why: configured, else what ``deployments`` (default: none) and
    the chart say (:func:`desched.deployment.releases.release_of`)."""
    if settings.target is not None:
        return configured(settings.target, settings.target_source)
    return release_of(doc, deployments if deployments is not None else Deployments())


def lint_text(file: str, text: str, settings: Settings, modules: Iterable[ModuleType] | None = None) -> FileResult:
    """Lint one file's text on its own (the release of its policies from what the file itself deploys), as a
    template when ``file`` names one; never raises for bad input."""
    return check(_parsed(FileResult(file, text), settings), settings, None, modules)


def lint_configmap_key(file: str, text: str, key: str, owner: str, settings: Settings) -> FileResult:
    """Lint the text of ConfigMap data key ``key`` on its own, as ``file`` (positions inside that text): what the
    webhook reads of a ConfigMap it is sent. ``owner`` names the ConfigMap."""
    result = _extracted(FileResult(file, text), lambda: extract_configmap_key(file, text, key, owner), settings)
    return check(result, settings)


def lint_documents(file: str, documents: list[Any], settings: Settings) -> FileResult:
    """Lint documents already decoded (an object an admission request carries, as
    :func:`desched.reading.yamlnodes.from_json` builds it): they have no text, so findings are placed by their JSON
    pointer (``Finding.path``)."""
    return check(_extracted(FileResult(file), lambda: extract(file, "", documents), settings), settings)


def _extracted(result: FileResult, extraction_of: Callable[[], Extraction], settings: Settings) -> FileResult:
    """``result`` with the policies and other documents ``extraction_of`` finds, and DS001 for what cannot be read."""
    try:
        extraction = extraction_of()
    except YamlError as exc:
        _unreadable(result, settings, exc.message, exc.line, exc.column)
        return result
    result.policies, result.others, result.wrappers = extraction.policies, extraction.others, extraction.wrappers
    for error in extraction.errors:
        _unreadable(result, settings, error.message, error.line, error.column, error.object)
    return result


def check(
    result: FileResult,
    settings: Settings,
    deployments: Deployments | None = None,
    modules: Iterable[ModuleType] | None = None,
) -> FileResult:
    """Run the rules on the policies of an extracted ``result``, each against its release (from ``deployments``:
    by default, those of the file itself), and apply suppression; fills ``result.checked`` (each policy's release
    and effective form, computed here once for every later reader)."""
    if deployments is None:
        documents = ((result.file, doc) for doc in result.others + result.wrappers)
        deployments = Deployments(documents, result.policies) if result.policies else Deployments()
    chosen = list(modules) if modules is not None else None

    def running_on(kind: str) -> list[ModuleType]:
        if chosen is None:
            return settings.enabled_rules(kind)
        return [module for module in chosen if kind in module.RUNS_ON]

    result.checked = []
    for written in result.policies:
        release = release_for(written, settings, deployments)
        doc = _rendered(written, deployments, release)
        ctx = Context(doc, release, settings.options, settings.distribution)
        if doc.unreached is not None:  # values the chart never receives: only what says so runs
            _run(ctx, [m for m in running_on(DocumentKind.POLICY) if getattr(m, "UNREACHED", False)], settings, result)
        elif doc.renders_no_policy:  # values the chart writes no policy from: only what says so runs
            _run(ctx, [m for m in running_on(DocumentKind.POLICY) if getattr(m, "NO_POLICY", False)], settings, result)
        elif ctx.is_kubedescheduler:
            _run(ctx, running_on(DocumentKind.KUBEDESCHEDULER), settings, result)
            _run_derived(ctx, running_on(DocumentKind.RENDERED), settings, result)
        else:
            _run(ctx, running_on(DocumentKind.POLICY), settings, result)
            if ctx.is_v1alpha1:
                _run_derived(ctx, running_on(DocumentKind.CONVERTED), settings, result)
        result.checked.append(CheckedPolicy(doc, release, ctx.effective))
    if result.findings:
        found = sorted(set(_known(result.findings, result.template)), key=Finding.sort_key)
        result.findings = _suppress(result.text, found)
    return result


def _rendered(doc: PolicyDoc, deployments: Deployments, release: Release) -> PolicyDoc:
    """``doc`` as the chart renders it when it is chart values (:func:`desched.deployment.chartrender.rendered`),
    else ``doc`` itself."""
    if doc.shape != Shape.HELM:
        return doc
    from desched.deployment.chartrender import rendered  # only chart values pay for the chart model

    return rendered(doc, deployments, release)


def _known(findings: list[Finding], template: "Neutralized | None") -> list[Finding]:
    """``findings`` but those placed on a template's placeholder: that value is known only once rendered. (The
    repository rules place findings on workloads and PDBs, which templates do not contribute.)"""
    if template is None:
        return findings
    return [finding for finding in findings if not template.covers(finding.line, finding.column)]


def _run(ctx: Context, modules: list[ModuleType], settings: Settings, result: FileResult, prefix: str = "") -> None:
    doc = ctx.doc
    for module in modules:
        for hit in module.check(ctx):
            if not doc.reported_here(hit.path):
                continue  # another values source of the same chart install reports it
            line, column = doc.position(hit.path, key=hit.key)
            level = settings.severities.get(module.ID) or hit.severity or module.SEVERITY
            path = pointer(doc.object_path(hit.path))
            message = prefix + hit.message
            if getattr(module, "RELEASE_DEPENDENT", False):  # a finding that depends on the release names the release
                # assumed and why; read at a finding, as most rules find nothing and lack the attribute
                message += f" ({ctx.release.note()})"
            supplied = doc.chart_default(hit.path)
            if supplied is not None:
                message += f" ({supplied})"
            result.findings.append(Finding(module.ID, level, result.file, line, column, message, doc.object, path))


#: How findings on a derived policy say where they are, by the way it was derived
#: (:data:`~desched.policy.effective.Derivation`).
_DERIVED_PREFIXES = {
    "converted": "after conversion to v1alpha2: ",
    "rendered": "in the policy the operator renders: ",
}


def _run_derived(ctx: Context, modules: list[ModuleType], settings: Settings, result: FileResult) -> None:
    """Lint the policy a v1alpha1 policy becomes once converted, or the one the OpenShift operator renders from a
    KubeDescheduler (:attr:`Context.effective`), with findings placed on the lines the user wrote. A CR the operator
    refuses renders nothing to lint (DS501/DS502 say why)."""
    effective = ctx.effective
    if effective.derivation not in _DERIVED_PREFIXES:
        return
    shape = Shape.RENDERED if effective.derivation == "rendered" else ctx.doc.shape
    derived = DerivedDoc(ctx.doc, effective.tree, effective.origins, shape)
    derived_ctx = Context(derived, ctx.release, settings.options, settings.distribution, effective.policy)
    _run(derived_ctx, modules, settings, result, _DERIVED_PREFIXES[effective.derivation])


class UnitGroups(NamedTuple):
    """The results of a run by deploy unit (:mod:`desched.gitops.units`): each unit's results, and the units."""

    groups: list[list[FileResult]]
    units: "DeployUnits | None"  #: ``None``: one file of policies alone, one unit, nothing to guess

    @classmethod
    def of(cls, results: list[FileResult], settings: Settings) -> "UnitGroups":
        """``results`` split by the units their files are in (a file in several units is in each group)."""
        if len(results) < 2 and not settings.clusters and not any(result.others for result in results):
            return cls([results] if results else [], None)  # a policy file alone pays for no unit model
        from desched.gitops.units import deploy_units

        found = deploy_units({r.file: (r.text, r.others) for r in results}, settings.clusters, settings.clusters_base)
        by_file = {result.file: result for result in results}
        groups = [[by_file[file] for file in sorted(unit.files)] for unit in found.units]
        return cls([group for group in groups if group], found)

    def shared(self) -> set[str]:
        """The files in several units."""
        seen: set[str] = set()
        twice: set[str] = set()
        for group in self.groups:
            for result in group:
                (twice if result.file in seen else seen).add(result.file)
        return twice


def lint_repository(results: list[FileResult], settings: Settings, units: UnitGroups | None = None) -> list[Finding]:
    """Findings of the rules that need every file of a deploy unit at once, unit by unit (``units``: the results'
    own, by default): the descheduler's own deployment (DS6xx, with or without a policy in the run) and policies
    meeting workloads and PDBs, on the unit's objects after its kustomize patches, and what desched could not tell
    of the units (DS7xx); suppression applies in the file each finding points at."""
    grouped = units if units is not None else UnitGroups.of(results, settings)
    found: set[Finding] = set(_unit_findings(grouped.units, results, settings))
    meeting: dict[object, tuple[list[CheckedPolicy], UnitObjects]] = {}  # the policies that meet the same objects
    for index, group in enumerate(grouped.groups):
        found.update(_delivery_findings(group, settings))
        if not any(result.others for result in group):  # chart values alone: what the chart renders runs
            found.update(_deployment_findings(group, settings, None))
            continue
        from desched.gitops.patches import apply_patches

        unit_texts = {result.file: result.text for result in group}
        objects = apply_patches(((result.file, doc) for result in group for doc in result.others), unit_texts)
        found.update(_deployment_findings(group, settings, objects))
        found.update(_remote_patch_findings(objects, settings))
        policies = [run for result in group for run in result.runs()]
        if policies:
            meeting.setdefault(_objects_key(group, objects, index), ([], objects))[0].extend(policies)
    if meeting and settings.enabled_rules(DocumentKind.REPOSITORY):
        from desched.linter.inventory import Repository

        for policies, objects in meeting.values():
            found.update(check_inventory(Repository.of(policies, objects.documents), settings))
    if not found:
        return []
    texts = {result.file: result.text for result in results}
    ignored = _ignored_by_annotation(results)
    placed: list[Finding] = []
    for file in sorted({finding.file for finding in found}):
        mine = sorted({f for f in found if f.file == file}, key=Finding.sort_key)
        placed.extend(_annotated(_suppress(texts.get(file, ""), mine), ignored))
    return placed


def _unit_findings(units: "DeployUnits | None", results: list[FileResult], settings: Settings) -> list[Finding]:
    """What the enabled unit rules (DS7xx) say of the run's deploy units."""
    if units is None or not any(result.others for result in results):
        return []
    modules = settings.enabled_rules(DocumentKind.UNITS)
    if not modules:
        return []
    from desched.gitops.units import UnitReport

    return _hits(modules, UnitReport(units, [(r.file, doc) for r in results for doc in r.others]), settings)


#: The annotation that suppresses rules on one object, for manifests whose comments ``helm template`` or
#: ``kustomize build`` dropped: ``desched.io/ignore: "DS607, DS608"`` (IDs or names).
IGNORE_ANNOTATION = "desched.io/ignore"


def _ignored_by_annotation(results: list[FileResult]) -> dict[tuple[str, str], frozenset[str]]:
    """Each object of the run that carries :data:`IGNORE_ANNOTATION`, (file, label) to the rule IDs it names."""
    from desched.gitops.wrappers import object_label
    from desched.workloads.model import objects

    ignored: dict[tuple[str, str], frozenset[str]] = {}
    for file, doc in objects((result.file, doc) for result in results for doc in result.others):
        metadata = doc.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        value = annotations.get(IGNORE_ANNOTATION) if isinstance(annotations, dict) else None
        kind = doc.get("kind")
        if not isinstance(value, str) or not isinstance(kind, str):
            continue
        names = (name.strip() for name in value.replace(",", " ").split())
        ids = frozenset(rule_registry.resolve(name) for name in names if _known_rule(name))
        ignored[(file, object_label(doc, kind))] = ids
    return ignored


def _known_rule(name: str) -> bool:
    try:
        rule_registry.resolve(name)
    except KeyError:
        return False
    return True


def _annotated(findings: list[Finding], ignored: dict[tuple[str, str], frozenset[str]]) -> list[Finding]:
    """``findings`` with those on an object whose :data:`IGNORE_ANNOTATION` names their rule suppressed."""
    if not ignored:
        return findings
    return [
        f._replace(suppressed=f"annotation {IGNORE_ANNOTATION}")
        if f.suppressed is None and f.rule in ignored.get((f.file, f.object), ())
        else f
        for f in findings
    ]


def _objects_key(group: list[FileResult], objects: "UnitObjects", index: int) -> object:
    """What the policies of a unit meet (DS4xx): the files of its objects, unless its patches changed them. Units that
    meet the same unpatched objects (overlays of one shared base, each with its own policy) are checked together, so
    that an object is judged once against every policy that may evict it."""
    if objects.patched:
        return index
    from desched.gitops.clusters import is_kustomization

    return frozenset(r.file for r in group if any(not is_kustomization(r.file, doc) for doc in r.others))


def _deployment_findings(results: list[FileResult], settings: Settings, objects: "UnitObjects | None") -> list[Finding]:
    """The deployment rules' findings (DS6xx) on every descheduler of one deploy unit: the workloads among its
    ``objects`` (``None``: it holds none) that run it and what the chart renders for each install of it."""
    charted = any(doc.shape == Shape.HELM for result in results for doc in result.policies)
    if not charted and not _workload_among(results):
        return []
    modules = settings.enabled_rules(DocumentKind.DEPLOYMENT)
    if not modules:
        return []
    from desched.deployment.repository import repository_runs  # only runs with workloads or chart values pay for it
    from desched.gitops.patches import UnitObjects

    policies = ((run.doc, run.effective.tree) for result in results for run in result.runs())
    runs = repository_runs(objects or UnitObjects([], {}, frozenset()), policies)
    runs.kubernetes = settings.kubernetes  # the cluster's version is the configuration's, never the files'
    return _hits(modules, runs, settings) if runs else []


def _remote_patch_findings(objects: "UnitObjects", settings: Settings) -> list[Finding]:
    """The deployment rules' findings on the descheduler workloads a unit patches in a remote base, judged only for
    what each patch sets: a rule runs when the patch sets every part it reads (its ``PATCH_READS``)."""
    if not objects.remote:
        return []
    from desched.deployment.repository import Runs, remote_patch_runs

    modules = [m for m in settings.enabled_rules(DocumentKind.DEPLOYMENT) if getattr(m, "PATCH_READS", None)]
    found: list[Finding] = []
    for run, parts in remote_patch_runs(objects):
        runs = Runs([run])
        runs.kubernetes = settings.kubernetes
        found.extend(_hits([m for m in modules if parts >= m.PATCH_READS], runs, settings))
    return found


def _delivery_findings(results: list[FileResult], settings: Settings) -> list[Finding]:
    """The delivery rules' findings on how the run's files reach a cluster (:mod:`desched.deployment.delivery`)."""
    if not any(result.others or result.wrappers for result in results):
        return []
    modules = settings.enabled_rules(DocumentKind.DELIVERY)
    if not modules:
        return []
    from desched.deployment.delivery import delivery

    release = newest() if settings.target is None else configured(settings.target, settings.target_source)
    documents = ((result.file, doc) for result in results for doc in result.others + result.wrappers)
    return _hits(modules, delivery(documents, (doc for r in results for doc in r.policies), release), settings)


def _workload_among(results: list[FileResult]) -> bool:
    """Whether the run holds a workload of any kind (``kind: List`` items too): a cheap test before the deployment
    model loads, read only when the run holds documents that are no policy."""
    if not any(result.others for result in results):
        return False
    from desched.workloads.model import WORKLOAD_KINDS, objects

    documents = objects((result.file, doc) for result in results for doc in result.others)
    return any(isinstance(doc.get("kind"), str) and doc["kind"] in WORKLOAD_KINDS for _, doc in documents)


def check_inventory(
    repo: "Repository", settings: Settings, focus: "Collection[Workload | PDB] | None" = None
) -> list[Finding]:
    """What the enabled repository rules find in ``repo`` (policies meeting an inventory, no file read), at their
    configured severity, before suppression; with ``focus``, only those about these workloads and PDBs, sorted
    (:func:`desched.linter.inventory.concerning`)."""
    found = _hits(settings.enabled_rules(DocumentKind.REPOSITORY), repo, settings)
    if focus is None:
        return found
    from desched.linter.inventory import concerning

    return concerning(found, focus)


def _hits(modules: Iterable[ModuleType], subject: Any, settings: Settings) -> list[Finding]:
    """The :class:`~desched.linter.rules._base.RepoHit` values ``modules`` find in ``subject``, as findings at their
    configured severity."""
    found = []
    for module in modules:
        for hit in module.check(subject):
            level = settings.severities.get(module.ID) or hit.severity or module.SEVERITY
            found.append(Finding(module.ID, level, hit.file, hit.line, hit.column, hit.message, hit.object))
    return found


def deployment_findings(file: str, obj: Any, settings: Settings) -> list[Finding]:
    """What the enabled deployment rules (DS6xx) find in the one object ``obj``, named ``file``, judged alone (no
    other object, no chart values): an admitted workload. As :func:`lint_repository` reports them, with the object's
    :data:`IGNORE_ANNOTATION` applied (``suppressed`` set); it has no text, hence no comment suppressions."""
    from desched.gitops.patches import UnitObjects

    result = FileResult(file)
    result.others = [obj]
    found = _deployment_findings([result], settings, UnitObjects([(file, obj)], {}, frozenset()))
    if not found:
        return []
    return _annotated(sorted(set(found), key=Finding.sort_key), _ignored_by_annotation([result]))


def _suppress(text: str, findings: list[Finding]) -> list[Finding]:
    table = parse_suppressions(text, rule_registry.resolve)
    return [f._replace(suppressed=table.reason(f.rule, f.line)) for f in findings]


def lint_file(path: str, settings: Settings, display: str | None = None) -> FileResult:
    """Read and lint ``path`` (``-`` for stdin) on its own, reported as ``display`` (default: ``path``); raises
    ``OSError`` only when the file cannot be read at all."""
    return check(read_file(path, settings, display), settings)


def read_file(
    path: str, settings: Settings, display: str | None = None, flux: Collection[FluxSource] | None = None
) -> FileResult:
    """Read ``path`` (``-`` for stdin) and find its policies and other documents, without running rules
    (:func:`check` does); ``flux`` are the Flux sources of the chart the repository holds (default: the file's
    own). Raises ``OSError`` only when the file cannot be read at all."""
    display = display or path
    try:
        text = read_text(path)
    except SourceError as exc:
        result = FileResult(display)
        _unreadable(result, settings, exc.message, exc.line, exc.column)
        return result
    return _parsed(FileResult(display, text), settings, flux)


def read_text_again(result: FileResult, settings: Settings, flux: Collection[FluxSource]) -> FileResult:
    """The file of ``result`` read again from its text, a HelmRelease naming the chart through ``flux``."""
    return _parsed(FileResult(result.file, result.text), settings, flux)


def _parsed(result: FileResult, settings: Settings, flux: Collection[FluxSource] | None = None) -> FileResult:
    """``result`` with what its text holds (read as a template when its file name says it is one), but the policies
    over a limit of :mod:`desched.gitops.policylimits`."""
    if is_template(result.file):
        _read_template(result, settings)
    else:
        umbrella = None
        if HELM_POLICY_KEY in result.text:  # only chart values can be an umbrella chart's
            from desched.gitops.umbrella import dependency_beside

            umbrella = dependency_beside(result.file)
        _extracted(result, lambda: extract(result.file, result.text, flux=flux, umbrella=umbrella), settings)
    return _within_limits(result, settings)


def _within_limits(result: FileResult, settings: Settings) -> FileResult:
    """``result`` without its policies over a limit (:func:`desched.gitops.policylimits.within_limits`), reported as
    DS001 where they go past it: no rule reads them, the rules that need every file included."""
    result.policies, refused = within_limits(result.policies)
    for doc, breach in refused:
        line, column = doc.position(breach.path)
        _unreadable(result, settings, f"{breach.message}; the policy is not checked", line, column, doc.object)
    return result


def _read_template(result: FileResult, settings: Settings) -> FileResult:
    """A template read as the YAML it is with its actions neutralised (:mod:`desched.linter.templates`), or
    ``skipped`` with the reason when that is not YAML. Its other documents are dropped: their values may be template
    expressions, so they take no part in the rules that need every file, nor in finding the deployed release."""
    from desched.linter.templates import TemplateError, neutralize  # only templates pay for it

    budget = NodeBudget()
    try:
        template = neutralize(result.text)
        documents = load_all(template.text, budget=budget)
    except NodeLimitError as exc:
        _unreadable(result, settings, exc.message, exc.line, exc.column)
        return result
    except TemplateError as exc:
        result.skipped = f"{exc.message} (line {exc.line}, column {exc.column})"
        return result
    except YamlError as exc:
        problem = exc.message.removeprefix("invalid YAML: ")
        where = f"line {exc.line}, column {exc.column}"
        result.skipped = f"not YAML once its template actions are neutralised ({where}: {problem})"
        return result
    result.template = template
    _extracted(result, lambda: extract(result.file, template.text, documents, budget), settings)
    result.others, result.wrappers = [], []
    return result


def _unreadable(result: FileResult, settings: Settings, message: str, line: int, column: int, object: str = "") -> None:
    """The one place DS001 findings are made: bytes, YAML or an embedded policy that cannot be read."""
    if _SYNTAX not in settings.disabled:
        level = settings.severities.get(_SYNTAX, "error")
        result.findings.append(Finding(_SYNTAX, level, result.file, line, column, message, object))
