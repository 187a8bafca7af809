"""Linting as a library: paths in, findings out, exactly as ``desched lint`` computes them.

:func:`lint_paths` reads every YAML file (and YAML template) under the given paths (``-`` is stdin), lints each,
runs the repository rules over all of them, and returns a :class:`LintRun`. It never raises for bad input: unreadable
bytes and YAML are DS001 findings, paths that cannot be read at all are listed in ``unreadable``, and templates that
are not YAML once their template actions are neutralised in ``skipped``. :func:`load_config` reads a
``.desched.yaml`` (found from the current directory when no path is given) and :func:`settings_from` turns it into
the :class:`~desched.linter.engine.Settings` the engine takes.
"""

import os
from collections.abc import Iterable
from typing import NamedTuple

from desched.deployment.releases import Deployments
from desched.linter.config import Config, discover, load
from desched.linter.engine import (
    FileResult,
    Settings,
    UnitGroups,
    check,
    lint_repository,
    read_file,
    read_text_again,
)
from desched.linter.finding import Finding
from desched.reading.sources import iter_paths, repository_root
from desched.runtime.collector import paused

__all__ = ["LintRun", "lint_paths", "load_config", "settings_from"]


class LintRun(NamedTuple):
    """What one lint run found: ``findings`` sorted (suppressed ones included, with ``Finding.suppressed`` set),
    the number of ``files`` linted, the ``unreadable`` paths as ``cannot read PATH: reason`` lines, the text of
    every file a finding points at (``sources``, for showing the offending lines), and the templates not linted as
    (file, reason) pairs (``skipped``; they are not counted in ``files``), and the special files (FIFOs, sockets,
    devices) a directory walk passed over as ``PATH: reason`` lines (``passed``; never an error), and the files named
    in ``paths`` that hold nothing desched judges (``unchecked``: no policy, workload, PodDisruptionBudget or
    descheduler chart wrapper, and no finding; a directory walk stays quiet about unrelated YAML)."""

    findings: list[Finding]
    files: int
    unreadable: list[str]
    sources: dict[str, str]
    skipped: tuple[tuple[str, str], ...] = ()
    passed: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


def load_config(path: str | None = None) -> Config:
    """The configuration at ``path``, or the ``.desched.yaml`` that applies to the current directory, or the empty
    configuration; raises :class:`~desched.errors.ConfigError` for an invalid file."""
    found = path or discover()
    return load(found) if found else Config()


def settings_from(config: Config) -> Settings:
    """The engine settings a configuration asks for (target release, distribution, disabled rules, severities, rule
    options, the cluster's Kubernetes version)."""
    return Settings(
        config.target,
        frozenset(config.disabled),
        dict(config.severities),
        dict(config.options),
        target_source=f"target-version in {config.source or '.desched.yaml'}",
        distribution=config.distribution,
        clusters=config.clusters or None,
        clusters_base=os.path.dirname(os.path.abspath(config.source)) if config.source else None,
        kubernetes=config.kubernetes,
    )


@paused()
def lint_paths(
    paths: Iterable[str],
    settings: Settings | None = None,
    ignore: Iterable[str] = (),
    stdin_name: str | None = None,
    context: bool = True,
) -> LintRun:
    """Lint ``paths`` (files, directories walked for ``*.yaml``/``*.yml`` and the templates of
    :data:`~desched.reading.sources.TEMPLATE_SUFFIXES`, ``-`` for stdin reported as ``stdin_name``) with ``settings``
    (default: every rule, target from the chart or the newest release), deploy unit by deploy unit
    (:mod:`desched.gitops.units`). With ``context``, each file named is judged in the units of its repository that
    hold it (:mod:`desched.gitops.context`): their other files are read too, and only the findings in the paths
    given are reported. The cyclic garbage collector is paused meanwhile (:mod:`desched.runtime.collector`): the
    trees of every file are kept until the repository rules have run."""
    chosen = settings if settings is not None else Settings()
    paths = list(paths)
    named = set(paths)
    extra = _context(paths, ignore, chosen) if context else []
    given = _Given(paths) if extra else None
    unreadable: list[str] = []

    def on_error(path: str, reason: str) -> None:
        if given is None or given.holds(path):
            unreadable.append(f"cannot read {path}: {reason}")

    findings: list[Finding] = []
    sources: dict[str, str] = {}
    kept: list[FileResult] = []  # files with policies or other documents: checked once every file is read
    skipped: list[tuple[str, str]] = []
    passed: list[str] = []
    unchecked: list[str] = []
    files = 0
    for path in iter_paths(paths + extra, ignore, on_error, lambda path, reason: passed.append(f"{path}: {reason}")):
        try:
            result = read_file(path, chosen, display=stdin_name if path == "-" else None)
        except OSError as exc:
            on_error(path, exc.strerror or str(exc))
            continue
        if given is not None and not given.holds(path):
            kept.extend([result] if result.policies or result.others else [])  # context, never reported
            continue
        if result.skipped is not None:
            skipped.append((result.file, result.skipped))
            continue
        files += 1
        if path in named and not result.findings:
            unchecked.append(result.file)  # unless it holds something judged (below)
        if result.policies or result.others:
            kept.append(result)
        else:
            _collect(check(result, chosen), findings, sources)
    kept = _named_through_flux(kept, chosen)
    named_kept = {result.file: result for result in kept if result.file in unchecked}
    unchecked = [file for file in unchecked if file not in named_kept or not _judged(named_kept[file])]
    units = UnitGroups.of(kept, chosen)
    state = _Shared(units.shared(), set())
    checked = [_checked_in_unit(group, state, chosen, findings, sources) for group in units.groups]
    texts = {result.file: result.text for result in kept}
    for finding in lint_repository(kept, chosen, UnitGroups(checked, units.units)):
        findings.append(finding)
        sources.setdefault(finding.file, texts.get(finding.file, ""))
    if given is not None:
        findings = [finding for finding in findings if given.holds(finding.file)]
    ordered = sorted(set(findings), key=Finding.sort_key)
    return LintRun(ordered, files, unreadable, sources, tuple(skipped), tuple(passed), tuple(unchecked))


def _context(paths: list[str], ignore: Iterable[str], settings: Settings) -> list[str]:
    """The files to read with the files among ``paths`` so that each is judged in its deploy units."""
    named = [path for path in paths if path != "-" and os.path.isfile(path)]
    if not any(repository_root(path) for path in named):
        return []  # files in no repository are judged alone
    from desched.gitops.context import context_files

    return context_files(named, ignore, settings.clusters, settings.clusters_base)


class _Given:
    """The paths of a run with context: which files are the ones given (to read and report), not context."""

    def __init__(self, paths: list[str]) -> None:
        self.files = {os.path.abspath(path) for path in paths if path != "-" and not os.path.isdir(path)}
        self.folders = tuple(os.path.join(os.path.abspath(path), "") for path in paths if os.path.isdir(path))
        self.stdin = "-" in paths

    def holds(self, path: str) -> bool:
        absolute = os.path.abspath(path)
        return absolute in self.files or absolute.startswith(self.folders) or (self.stdin and not os.path.exists(path))


def _checked_in_unit(
    group: list[FileResult], units: "_Shared", settings: Settings, findings: list[Finding], sources: dict[str, str]
) -> list[FileResult]:
    """The results of one deploy unit checked against the releases the unit deploys (a policy is checked against
    the release deployed with it, which another file of the unit may say); a file with policies in several units is
    checked in a copy for each, a file without policies once. Their findings go to ``findings`` and ``sources``."""
    with_policies = [result for result in group if result.policies]
    deployments = Deployments()
    if with_policies:
        documents = ((r.file, doc) for r in group for doc in r.others + r.wrappers)
        deployments = Deployments(documents, (doc for r in with_policies for doc in r.policies))
    mine = []
    for result in group:
        if not result.policies and result.file in units.checked:
            mine.append(result)  # nothing in it depends on the unit
            continue
        units.checked.add(result.file)
        mine.append(result.copy() if result.policies and result.file in units.shared else result)
        _collect(check(mine[-1], settings, deployments), findings, sources)
    return mine


class _Shared(NamedTuple):
    """The files of a run in several units, and the files checked so far."""

    shared: set[str]
    checked: set[str]


def _named_through_flux(kept: list[FileResult], settings: Settings) -> list[FileResult]:
    """``kept``, with each file read again whose HelmRelease names the descheduler chart only through a Flux source
    (HelmRepository, OCIRepository, HelmChart) another file holds, so that its values are found as chart values."""
    from desched.gitops.wrappers import flux_sources, installs, is_flux_source_kind

    candidates = (doc for result in kept for doc in result.others if isinstance(doc, dict))
    flux = [source for doc in candidates if is_flux_source_kind(doc.get("kind")) for source in flux_sources(doc)]
    if not flux:
        return kept

    def through_flux(doc: object) -> bool:
        if not isinstance(doc, dict) or doc.get("kind") != "HelmRelease":
            return False
        return next(installs(doc), None) is None and next(installs(doc, flux=flux), None) is not None

    return [
        read_text_again(result, settings, flux) if any(map(through_flux, result.others)) else result for result in kept
    ]


def _judged(result: FileResult) -> bool:
    """Whether ``result`` holds something desched judges: a policy, a workload or PodDisruptionBudget (the
    repository rules), or a wrapper of the descheduler chart (its values are the policy, even when they set none)."""
    if result.policies:
        return True
    if not result.others:
        return False
    from desched.gitops.wrappers import installs
    from desched.workloads.model import collect  # only a named file without a policy pays for it

    if any(next(installs(doc), None) is not None for doc in result.others if isinstance(doc, dict)):
        return True  # an install of the chart, even with its values all elsewhere (valuesFrom, values files)
    inventory = collect((result.file, doc) for doc in result.others)
    return bool(inventory.workloads or inventory.pdbs)


def _collect(result: FileResult, findings: list[Finding], sources: dict[str, str]) -> None:
    if result.findings:
        findings.extend(result.findings)
        sources[result.file] = result.text
