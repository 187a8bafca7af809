"""``desched scope``: which workloads may each policy's plugins evict, and why not.

Inputs:

* ``PATH`` (files, directories, ``-`` for stdin; default ``.`` unless ``--cluster`` or ``--kubeconfig`` is given,
  so pass ``.`` explicitly to combine a repository with a snapshot): every YAML file goes through the lint pipeline
  (:func:`~desched.linter.engine.lint_file`, with every rule but DS001 disabled: scope does not lint); its policies and
  its other documents (workloads, PDBs, HPAs, Namespaces, PriorityClasses, PVCs, StorageClasses) are used.
* ``--cluster SNAPSHOT`` (repeatable): the output of ``kubectl get <kinds> -A -o yaml`` (a ``kind: List``), read the
  same way; policies in ConfigMaps of the snapshot count too.
* ``--kubeconfig [PATH]`` (``--context NAME``): the live cluster, read-only (``get``/``list`` only) with the official
  client's configuration loading (``KUBECONFIG`` or ``~/.kube/config`` without PATH); kinds the credentials may not
  list are skipped with a warning on stderr. The ``kubernetes`` package is imported only on this path.
* ``--policy PATH`` (repeatable): when given, the policies come only from these files (their other documents are
  not read as workloads).

A file named several times is read once. v1alpha1 policies are converted first (``convert(strict=False)``, with
upstream semantics below v0.31, as the linter does). The release is ``--target-version``, else the linter's choice
per document (:func:`~desched.linter.engine.release_for`: the release deployed with it, else the newest).

Output (``--format text`` or ``json``), deterministic: policies sorted by file, line and object; workloads by
namespace, kind, name, file and line. Per workload: evictable or not, the ``profile/plugin`` pairs that may evict
it, the reasons of the refusals, the PDBs covering it with their allowed disruptions, the effective replicas.
Text is compact: identical reasons of several plugins are printed once (with the plugins they apply to unless they
apply to all). ``--all`` adds one line (JSON: a ``verdicts`` list) per profile/plugin verdict, notes included.
The summary counts policies, distinct workload entries of the inventory, and those evictable by at least one
policy.

Exit codes: 0 success (whatever the verdicts), 2 usage error, unreadable input or no policy found (one ``desched:``
line on stderr). Files that fail to parse are reported on stderr as ``desched: warning:`` lines and skipped, except
``--cluster``/``--policy`` files, which must be readable YAML (exit 2). A cluster that cannot be reached or read is
exit 2 too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from desched import versions
from desched.deployment.releases import Deployments
from desched.errors import EXIT_ERROR, EXIT_OK, DeschedError, KubeError, UsageError
from desched.linter.engine import CheckedPolicy, FileResult, Settings, check, read_file
from desched.reading.sources import iter_paths
from desched.workloads.model import PDB, Inventory, Workload, collect
from desched.workloads.pdb import PDBIndex, allowed_disruptions
from desched.workloads.scope import Verdict, evaluate, summarize

__all__ = ["SCOPE", "ScopeCommand", "run"]

_SYNTAX = "DS001"
_NO_PLUGIN = "no deschedule or balance plugin is enabled"


def run(args: argparse.Namespace) -> int:
    """Run ``desched scope`` for parsed ``args``; returns the exit code (errors are printed, never raised)."""
    try:
        target = _target(getattr(args, "target_version", None))
        report = _analyse(
            list(args.paths or []),
            list(getattr(args, "cluster", None) or []),
            list(getattr(args, "policy", None) or []),
            target,
            bool(getattr(args, "all", False)),
            _live(args),
        )
    except DeschedError as exc:
        print(f"desched: {exc.args[0]}", file=sys.stderr)
        return EXIT_ERROR
    if getattr(args, "format", "text") == "json":
        text = json.dumps(_public(report), indent=2, ensure_ascii=False) + "\n"
    else:
        text = _render_text(report)
    sys.stdout.write(text)
    sys.stdout.flush()
    return EXIT_OK


# --- reading ------------------------------------------------------------------------------------------------------


_DEFAULT_KUBECONFIG = ""  # ``--kubeconfig`` without a path: the client's default (KUBECONFIG, ~/.kube/config)


def _live(args: argparse.Namespace) -> tuple[str | None, str | None] | None:
    """``(kubeconfig path or None for the default, context)`` when the live cluster is asked for, else ``None``."""
    kubeconfig = getattr(args, "kubeconfig", None)
    if kubeconfig is None:
        if getattr(args, "context", None):
            raise UsageError("--context needs --kubeconfig")
        return None
    return (kubeconfig or None), getattr(args, "context", None)


def _read_live(kubeconfig: str | None, context: str | None) -> list[tuple[str, Any]]:
    """The live cluster's objects as (pseudo-file, document) pairs; warnings go to stderr."""
    from desched.runtime.kube import KubeClient
    from desched.workloads.live import read_cluster

    try:
        cluster = KubeClient(kubeconfig, context)
        inputs = read_cluster(cluster)
    except KubeError as exc:
        raise UsageError(str(exc)) from None
    for warning in inputs.warnings:
        print(f"desched: warning: {warning}", file=sys.stderr)
    source = f"cluster:{cluster.context}"
    return [(source, obj) for obj in inputs.objects]


def _target(text: str | None) -> int | None:
    return versions.from_option(text)


def _settings(target: int | None) -> Settings:
    from desched.linter import rules

    disabled = {module.ID for module in rules.all_rules()} - {_SYNTAX}
    return Settings(target=target, disabled=disabled)


class _Reader:
    """Reads each file once through the lint pipeline; reports parse problems."""

    __slots__ = ("cache", "settings")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache: dict[str, FileResult] = {}

    def files(self, paths: list[str]) -> list[str]:
        problems: list[str] = []

        def on_error(path: str, reason: str) -> None:
            problems.append(f"cannot read {path}: {reason}")

        found = list(iter_paths(paths, (), on_error))
        if problems:
            raise UsageError(problems[0])
        return found

    def check(self, deployments: Deployments) -> None:
        """Run the lint pipeline on every file read, each policy against the release ``deployments`` say, chart
        values rendered with every values source of their install (:mod:`desched.deployment.chartrender`)."""
        for result in self.cache.values():
            check(result, self.settings, deployments)

    def read(self, path: str, required: bool) -> FileResult:
        key = path if path == "-" else os.path.normpath(path)
        result = self.cache.get(key)
        if result is not None:
            return result
        try:
            result = read_file(path, self.settings)
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        self.cache[key] = result
        empty = not result.policies and not result.others
        for finding in result.findings:
            if finding.rule != _SYNTAX:
                continue
            where = f"{finding.file}:{finding.line}:{finding.column}"
            if required and empty:
                raise UsageError(f"cannot read {where}: {finding.message}")
            print(f"desched: warning: {where}: {finding.message} (skipped)", file=sys.stderr)
        return result


def _unique(paths: list[str]) -> list[str]:
    seen: set[str] = set()
    unique: list[str] = []
    for path in paths:
        key = path if path == "-" else os.path.normpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


# --- analysis -----------------------------------------------------------------------------------------------------


def _analyse(
    paths: list[str],
    cluster: list[str],
    policy_paths: list[str],
    target: int | None,
    full: bool,
    live: tuple[str | None, str | None] | None = None,
) -> Any:
    if paths.count("-") + cluster.count("-") + policy_paths.count("-") > 1:
        raise UsageError("- (stdin) can be given only once")
    reader = _Reader(_settings(target))
    if not paths and not cluster and live is None:
        paths = ["."]
    sources = _unique(reader.files(paths) + reader.files(cluster))
    named = {os.path.normpath(path) for path in cluster}
    results = [reader.read(path, required=os.path.normpath(path) in named) for path in sources]
    documents = [(result.file, doc) for result in results for doc in result.others]
    if live is not None:
        documents += _read_live(*live)
    policy_results = [reader.read(path, required=True) for path in _unique(reader.files(policy_paths))]
    values = [doc for result in reader.cache.values() for doc in result.policies]
    wrappers = [(result.file, doc) for result in reader.cache.values() for doc in result.wrappers]
    deployments = Deployments(documents + wrappers, values)
    reader.check(deployments)
    # the policies that run: one per chart install, however many values sources it has
    policies = [run for result in (policy_results if policy_paths else results) for run in result.runs()]
    if not policies:
        raise UsageError("no descheduler policy found in the inputs (give PATH with a policy, or --policy FILE)")
    clustered = _Clusters(results, documents, named)
    evictable: set[int] = set()
    reports = []
    for run in policies:
        names, inventory, index = clustered.of(run.doc.file)
        report = _policy_report(run, inventory, index, full, evictable)
        reports.append({**report, "clusters": names})
    reports.sort(key=lambda entry: (entry["file"], entry["line"], entry["object"]))
    workloads = len(collect(documents).workloads)
    summary = {"policies": len(reports), "workloads": workloads, "evictable": len(evictable)}
    return {"policies": reports, "summary": summary}


class _Clusters:
    """The inventory each policy meets: the workloads and PDBs of the deploy units that hold it
    (:mod:`desched.gitops.units`, the configuration's ``clusters:`` first) and the cluster snapshots' and live
    cluster's, which every policy meets."""

    def __init__(self, results: list[FileResult], documents: list[tuple[str, Any]], snapshots: set[str]) -> None:
        from desched.gitops.units import deploy_units
        from desched.linter.lint import load_config

        config = load_config()
        base = os.path.dirname(os.path.abspath(config.source)) if config.source else None
        results = [result for result in results if os.path.normpath(result.file) not in snapshots]  # seen by all
        self.found = deploy_units({r.file: (r.text, r.others) for r in results}, config.clusters, base).units
        self.read = {result.file for result in results}
        self.structured = len(self.found) > 1
        self.documents = documents
        self.cache: dict[tuple[str, ...], tuple[Inventory, PDBIndex]] = {}

    def of(self, file: str) -> tuple[list[str], Inventory, PDBIndex]:
        """The names of the units of a policy in ``file`` (``[]``: the repository is one unit), and the
        inventory and PDB index it meets."""
        mine = [unit for unit in self.found if file in unit.files]
        names = [unit.name for unit in mine] if self.structured else []
        key = tuple(unit.name for unit in mine)
        if key not in self.cache:
            visible = set().union(*(unit.files for unit in mine))
            documents = [(f, doc) for f, doc in self.documents if f in visible or f not in self.read]
            inventory = collect(documents)
            self.cache[key] = inventory, PDBIndex(inventory.pdbs)
        return (names, *self.cache[key])


def _policy_report(
    run: CheckedPolicy, inventory: Inventory, index: PDBIndex, full: bool, evictable: set[int]
) -> dict[str, Any]:
    """The report of one policy as the lint pipeline checked it (its release, its effective policy); adds the ``id``
    of each workload it may evict to ``evictable``."""
    doc, release, effective = run
    target = release.target
    by_workload: dict[int, list[Verdict]] = {}
    for verdict in evaluate(effective.policy, inventory, target, index):
        by_workload.setdefault(id(verdict.workload), []).append(verdict)
    entries = [
        _workload_entry(workload, by_workload.get(id(workload), []), index, full) for workload in inventory.workloads
    ]
    evictable.update(
        id(workload) for workload, entry in zip(inventory.workloads, entries, strict=True) if entry["evictable"]
    )
    entries.sort(key=lambda e: (e["namespace"], e["kind"], e["name"], e["file"], e["line"], e["column"]))
    line = doc.position(())[0]
    api_version = doc.api_version if isinstance(doc.api_version, str) else None
    return {
        "file": doc.file,
        "line": line,
        "object": doc.object,
        "api_version": api_version,
        "converted": effective.derived,
        "target": versions.render(target),
        "release": release.note(),
        "workloads": entries,
    }


def _workload_entry(workload: Workload, verdicts: list[Verdict], index: PDBIndex, full: bool) -> dict[str, Any]:
    if verdicts:
        summary = summarize(verdicts)[workload.key]
        evictable, targeted_by, reasons = summary.evictable, summary.targeted_by, summary.reasons
    else:
        evictable, targeted_by, reasons = False, [], [_NO_PLUGIN]
    pdbs = sorted(index.matching(workload), key=lambda pdb: (pdb.namespace, pdb.name, pdb.file, pdb.line))
    entry: dict[str, Any] = {
        "kind": workload.kind,
        "namespace": workload.namespace,
        "name": workload.name,
        "file": workload.file,
        "line": workload.line,
        "column": workload.column,
        "evictable": evictable,
        "targeted_by": [_label(label) for label in targeted_by],
        "reasons": reasons,
        "_compact": _compact(verdicts) if verdicts else [_NO_PLUGIN],
        "pdbs": [_pdb_entry(pdb, workload) for pdb in pdbs],
        "replicas": workload.replicas,
    }
    if full:
        entry["verdicts"] = [
            {"profile": v.profile, "plugin": v.plugin, "evictable": v.evictable, "reasons": list(v.reasons)}
            for v in verdicts
        ]
    return entry


def _label(label: str) -> dict[str, str]:
    profile, _, plugin = label.rpartition("/")
    return {"profile": profile, "plugin": plugin}


def _pdb_entry(pdb: PDB, workload: Workload) -> dict[str, Any]:
    return {
        "namespace": pdb.namespace,
        "name": pdb.name,
        "file": pdb.file,
        "line": pdb.line,
        "allowed_disruptions": allowed_disruptions(pdb, workload.replicas),
    }


def _compact(verdicts: list[Verdict]) -> list[str]:
    """The refusal reasons, each once, with the ``profile/plugin`` pairs it applies to unless it applies to all."""
    refusing = [verdict for verdict in verdicts if not verdict.evictable]
    labels: dict[str, list[str]] = {}
    for verdict in refusing:
        for reason in verdict.reasons:
            owners = labels.setdefault(reason, [])
            label = f"{verdict.profile}/{verdict.plugin}"
            if label not in owners:
                owners.append(label)
    return [
        reason if len(owners) == len(refusing) else f"{reason} [{', '.join(owners)}]"
        for reason, owners in labels.items()
    ]


def _public(value: Any) -> Any:
    """``value`` without the keys starting with ``_`` (text-only details)."""
    if isinstance(value, dict):
        return {key: _public(item) for key, item in value.items() if not key.startswith("_")}
    if isinstance(value, list):
        return [_public(item) for item in value]
    return value


# --- text ---------------------------------------------------------------------------------------------------------


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def _pdb_line(pdb: dict[str, Any], replicas: int | None) -> str:
    allowed = pdb["allowed_disruptions"]
    budget = "allowed disruptions unknown" if allowed is None else f"allows {_plural(allowed, 'disruption')}"
    of = "" if replicas is None else f" of {_plural(replicas, 'replica')}"
    return f"    PDB {pdb['namespace']}/{pdb['name']}  ({pdb['file']}:{pdb['line']})  {budget}{of}"


def _workload_lines(item: dict[str, Any]) -> list[str]:
    if item["evictable"]:
        verdict = "evictable by " + ", ".join(f"{pair['profile']}/{pair['plugin']}" for pair in item["targeted_by"])
    else:
        verdict = "not evictable: " + "; ".join(item["_compact"])
    lines = [f"  {item['kind']} {item['namespace']}/{item['name']}  ({item['file']}:{item['line']})  {verdict}"]
    lines.extend(_pdb_line(pdb, item["replicas"]) for pdb in item["pdbs"])
    for entry in item.get("verdicts", []):
        state = "evictable" if entry["evictable"] else "not evictable"
        notes = f": {'; '.join(entry['reasons'])}" if entry["reasons"] else ""
        lines.append(f"    {entry['profile']}/{entry['plugin']}: {state}{notes}")
    return lines


def _render_text(report: dict[str, Any]) -> str:
    lines: list[str] = []
    for policy in report["policies"]:
        details = [policy["api_version"] or "no apiVersion", f"target {policy['target']}"]
        if policy["clusters"]:
            details.append(f"cluster {', '.join(policy['clusters'])}")
        if policy["converted"]:
            rendered = str(policy["object"]).startswith("KubeDescheduler")
            details.append("as the operator renders it" if rendered else "converted to v1alpha2")
        lines.append(f"{policy['file']}:{policy['line']}: {policy['object']} ({', '.join(details)})")
        if not policy["workloads"]:
            lines.append("  no workloads in the inputs")
        for item in policy["workloads"]:
            lines.extend(_workload_lines(item))
        lines.append("")
    summary = report["summary"]
    lines.append(
        f"{_plural(summary['policies'], 'policy', 'policies')}, {_plural(summary['workloads'], 'workload')}, "
        f"{summary['evictable']} evictable by at least one policy"
    )
    return "\n".join(lines) + "\n"


class ScopeCommand:
    """``desched scope``."""

    help = "report which workloads each policy may evict, and why not"
    description = (
        "Evaluate every descheduler policy against the workloads of the inputs (Deployments, StatefulSets, "
        "DaemonSets, Jobs, Pods, ... with their PDBs, HPAs, Namespaces, PriorityClasses and PVCs) and report, "
        "per workload, whether an enabled deschedule/balance plugin may evict its pods, by which "
        "profile/plugin, the reasons when out of scope and the PodDisruptionBudgets covering it."
    )
    epilog = "Exit codes: 0 success; 2 usage error, unreadable input or no policy found."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "paths",
            nargs="*",
            metavar="PATH",
            help="files or directories with policies and manifests (default: . unless --cluster or --kubeconfig is "
            "given); - reads stdin",
        )
        parser.add_argument(
            "--cluster",
            action="append",
            default=[],
            metavar="SNAPSHOT",
            help="output of 'kubectl get <kinds> -A -o yaml' (a kind: List) to read workloads from; repeatable",
        )
        parser.add_argument(
            "--kubeconfig",
            nargs="?",
            const="",
            metavar="PATH",
            help="also read workloads from the live cluster, read-only (without PATH: KUBECONFIG or ~/.kube/config)",
        )
        parser.add_argument("--context", metavar="NAME", help="kubeconfig context for --kubeconfig (default: current)")
        parser.add_argument(
            "--policy",
            action="append",
            default=[],
            metavar="PATH",
            help="take the policies only from this file (repeatable) instead of from PATH and the snapshots",
        )
        parser.add_argument(
            "--target-version",
            metavar="v0.NN",
            help="descheduler release the policies run on (default: the release deployed with each, else the newest)",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
        parser.add_argument("--all", action="store_true", help="also list every profile/plugin verdict with its notes")

    def run(self, args: argparse.Namespace) -> int:
        return run(args)


SCOPE = ScopeCommand()
