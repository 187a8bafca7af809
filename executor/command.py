"""``desched simulate`` and ``desched run``: two drivers over one engine (:mod:`desched.executor.framework`).

* ``simulate --policy POLICY --cluster SNAPSHOT [--now RFC3339] [--format text|json] [--explain] [--ignore-pdbs]
  [--dry-run] [--samples N [--seed S]]`` runs one cycle offline on a snapshot (``kind: List`` or multi-document
  YAML/JSON, as ``kubectl get ... -A -o yaml`` prints it) as a real run makes it: every eviction meets the Eviction
  API's PodDisruptionBudget check (:mod:`desched.executor.budgets`; ``--ignore-pdbs``: it succeeds) and the evicted pod
  stays listed as terminating. ``--dry-run`` predicts upstream's ``--dry-run`` instead: no budget check, and the
  evicted pod is gone for the rest of the cycle. ``--samples N`` runs the cycle over N listing orders
  (:mod:`desched.executor.forecast`); the evictions printed are still the first order's (as listed).
* ``run --policy POLICY [--dry-run] [--kubeconfig PATH] [--context NAME] [--interval DURATION]`` runs against the live
  cluster (see :mod:`desched.executor.live`).

``POLICY`` is a raw policy, a ConfigMap holding one, Helm chart values, a v1alpha1 policy (converted) or a
KubeDescheduler (rendered). Both refuse a policy with lint errors: the findings go to stderr and the exit code is 2.
JSON output: ``{"evictions": [{namespace, pod, node, profile, plugin}], "failures": [{namespace, pod, node, profile,
plugin, status, message, outcome}], "pluginErrors": [{profile, plugin, message}], "summary": {evicted, byPlugin,
byNode, byNamespace, skippedCycle}}``, plus ``"pods"`` (namespace, pod, node, evictable, reason) with ``--explain``
and ``"forecast"`` (samples, seed, ``evicted`` and ``byPlugin`` as ``{min, median, max}``, ``pods``: namespace, pod,
node, ``evictedIn`` samples) with ``--samples``.
``failures`` are the evictions tried and not done; ``pluginErrors`` the plugins that failed (the text output's ``plugin
error:`` lines, also warned on stderr): every failure the text output shows is in the JSON too.

Exit codes: 0 the cycle ran (whatever it evicted); 2 usage error, unreadable policy or snapshot, a policy with lint
errors, a policy that cannot run in this cluster (a missing PriorityClass, ...), or an unreachable cluster.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from desched import jsontext
from desched.errors import UsageError
from desched.executor.cluster import Json
from desched.policy.model import EVICTING_POINTS, Policy

EXIT_OK, EXIT_ERROR = 0, 2


def load_policy(path: str, target_text: str | None) -> Policy:
    """The typed v1alpha2 policy ``path`` stands for (its effective form, which the lint gate computed), after the
    lint gate (see the module docstring)."""
    from desched import versions
    from desched.linter.engine import Settings, lint_file
    from desched.linter.formatters import findings_report, get
    from desched.plugins import OPENSHIFT

    try:
        target = versions.parse(target_text) if target_text else None
    except ValueError as error:
        raise UsageError(str(error)) from None
    # OpenShift's build registers every upstream plugin and more: prepare_policy names the ones desched cannot run
    settings = Settings(target=target, distribution=OPENSHIFT)
    try:
        result = lint_file(path, settings)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    errors = [finding for finding in result.findings if finding.severity == "error" and not finding.suppressed]
    if errors:
        sys.stderr.write(get("text")(findings_report(errors, 1, {result.file: result.text}, "never")))
        raise UsageError(f"{path}: the policy has lint errors ({len(errors)}); fix them before running it")
    for finding in result.findings:  # what upstream runs all the same, but the reader should know
        if finding.severity == "warning" and not finding.suppressed:
            where = f"{finding.file}:{finding.line}:{finding.column}"
            sys.stderr.write(f"desched: warning: {where}: {finding.message} ({finding.rule})\n")
    if not result.policies:
        raise UsageError(f"no descheduler policy in {path}")
    if len(result.policies) > 1:
        raise UsageError(f"{path} holds {len(result.policies)} policies; give a file with exactly one")
    return result.effective[0].policy


def read_snapshot(path: str) -> list[Json]:
    """The objects of a snapshot file (``-`` for stdin): JSON or YAML, ``*List`` documents flattened."""
    import yaml

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {path}: not UTF-8 text") from None
    try:
        if text.lstrip().startswith("{"):
            documents: list[Any] = [json.loads(text)]
        else:
            documents = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except (ValueError, yaml.YAMLError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"cannot read {path}: {first}") from None
    objects: list[Json] = []
    for document in documents:
        if (
            isinstance(document, dict)
            and str(document.get("kind", "")).endswith("List")
            and isinstance(document.get("items"), list)
        ):
            objects.extend(item for item in document["items"] if isinstance(item, dict))
        elif isinstance(document, dict):
            objects.append(document)
    return objects


def parse_now(text: str | None) -> datetime:
    if not text:
        return datetime.now(timezone.utc)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {text!r} is not an RFC 3339 time (2026-11-22T10:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def report(result: Any, evictions: list[Any], explain: bool) -> Json:
    """The JSON output contract (module docstring)."""
    from desched.executor.evictions import summary

    document: Json = {
        "evictions": [eviction._asdict() for eviction in evictions],
        "summary": {**summary(evictions), "skippedCycle": result.skipped},
        "pluginErrors": [error._asdict() for error in result.errors],
    }
    if explain:
        document["pods"] = [
            {"namespace": v.namespace, "pod": v.pod, "node": v.node, "evictable": v.evictable, "reason": v.reason}
            for v in result.verdicts
        ]
    return document


def render_text(document: Json, errors: Sequence[object], failures: list[Any]) -> str:
    """A readable table of the evictions, the failures and the summary."""
    rows = [("NAMESPACE", "POD", "NODE", "PROFILE", "PLUGIN")] + [
        (e["namespace"], e["pod"], e["node"], e["profile"], e["plugin"]) for e in document["evictions"]
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    summary = document["summary"]
    if summary["skippedCycle"]:
        lines = ["cycle skipped: fewer than 2 ready nodes match the policy's nodeSelector"]
    for failure in failures:
        lines.append(
            f"failed: {failure.namespace}/{failure.pod} ({failure.profile}/{failure.plugin}): {failure.message}"
        )
    for error in errors:
        lines.append(f"plugin error: {error}")
    by_plugin = ", ".join(f"{name} {count}" for name, count in summary["byPlugin"].items())
    lines.append(
        f"{summary['evicted']} pod{'s' if summary['evicted'] != 1 else ''} evicted"
        + (f" ({by_plugin})" if by_plugin else "")
    )
    for pod in document.get("pods", []):
        verdict = "evictable" if pod["evictable"] else f"protected: {pod['reason']}"
        lines.append(f"  {pod['namespace']}/{pod['pod']} on {pod['node'] or '-'}: {verdict}")
    if "forecast" in document:
        lines.extend(_forecast_lines(document["forecast"], summary))
    return "\n".join(lines) + "\n"


def _forecast_lines(forecast: Json, summary: Json) -> list[str]:
    """The ``--samples`` table: per plugin and in total, this run's count beside the min, median and max, then the
    pods that only some listing orders evict."""
    title = f"over {forecast['samples']} listing orders (seed {forecast['seed']})"
    rows = [(title, "this run", "min", "median", "max")]
    for name, spread in [("all plugins", forecast["evicted"]), *forecast["byPlugin"].items()]:
        single = summary["evicted"] if name == "all plugins" else summary["byPlugin"].get(name, 0)
        rows.append((f"  {name}", str(single), str(spread["min"]), str(spread["median"]), str(spread["max"])))
    width = max(len(row[0]) for row in rows)
    lines = [row[0].ljust(width) + "".join(cell.rjust(9) for cell in row[1:]) for row in rows]
    samples = forecast["samples"]
    sometimes = [pod for pod in forecast["pods"] if pod["evictedIn"] < samples]
    if sometimes:
        lines.append(f"evicted in some listing orders only ({len(sometimes)} pods):")
        lines += [
            f"  {pod['namespace']}/{pod['pod']} on {pod['node'] or '-'}: {pod['evictedIn']} of {samples}"
            for pod in sometimes
        ]
    elif forecast["pods"]:
        lines.append(f"every pod above is evicted in all {samples} listing orders")
    return lines


def _progress(total_plugins: int) -> Any:
    """A stderr progress line per plugin on a terminal (large clusters); nothing otherwise."""
    done = [0]

    def observe(profile: str, plugin: str, seconds: float) -> None:
        done[0] += 1
        sys.stderr.write(f"\r[{done[0]}/{total_plugins}] {profile}/{plugin} ({seconds:.1f} s)\033[K")
        if done[0] == total_plugins:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return observe


def _enabled_count(policy: Policy) -> int:
    return sum(len(profile.enabled(*EVICTING_POINTS)) for profile in policy.profiles)


class SimulateCommand:
    help = "predict the evictions of one cycle offline, from a cluster snapshot"
    description = (
        "Run one descheduling cycle of POLICY on a cluster snapshot (kubectl get nodes,pods,pdb,namespaces,"
        "priorityclasses,pvc -A -o yaml) with upstream's decisions, as a real run makes them, and print the "
        "evictions; with --samples, the range over listing orders."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--policy",
            required=True,
            metavar="POLICY",
            help="policy file (raw, ConfigMap, chart values, v1alpha1 or KubeDescheduler)",
        )
        parser.add_argument("--cluster", required=True, metavar="SNAPSHOT", help="cluster snapshot; - reads stdin")
        parser.add_argument("--now", metavar="RFC3339", help="the clock for age-based plugins (default: now)")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--explain", action="store_true", help="also say, per pod, why it is (not) evictable")
        parser.add_argument(
            "--ignore-pdbs",
            action="store_true",
            help="evict as if no PodDisruptionBudget existed; default: the Eviction API's budget check, as "
            "`desched run` meets it",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="predict upstream's --dry-run: budgets are not consulted and an evicted pod is gone for the rest of "
            "the cycle; default: a real run, where it stays listed as terminating",
        )
        parser.add_argument(
            "--samples",
            metavar="N",
            help="run the cycle over N listing orders (the first as listed) and report min, median and max per "
            "plugin and how often each pod is evicted: upstream chooses among equal pods at random",
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="seed of the shuffled listing orders of --samples (default: 0)"
        )
        parser.add_argument(
            "--jobs",
            type=int,
            metavar="N",
            help="processes that run the --samples orders (default: the usable CPUs); the forecast is the same",
        )
        parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policy runs on")
        parser.epilog = "Exit codes: 0 the cycle ran; 2 usage error, unreadable input or a policy with lint errors."

    def run(self, args: argparse.Namespace) -> int:
        from desched.executor.budgets import BudgetCheck
        from desched.executor.cluster import Cluster, bulk_load
        from desched.executor.defaultevictor import DefaultEvictor, UnrunnablePolicy
        from desched.executor.evictions import Limits, PodEvictor, SameCycle
        from desched.executor.forecast import forecast, usable_cpus
        from desched.executor.framework import CycleResult, ListingOrder, prepare_policy, run_cycle

        samples = _samples(args.samples)
        jobs = usable_cpus() if args.jobs is None else args.jobs
        if jobs < 1:
            raise UsageError(f"--jobs {jobs}: give at least 1")
        policy = load_policy(args.policy, args.target_version)
        now = parse_now(args.now)
        with bulk_load():
            cluster = Cluster.from_objects(read_snapshot(args.cluster))
        view = SameCycle.DRY_RUN if args.dry_run else SameCycle.REAL
        large = sys.stderr.isatty() and len(cluster.pods) > 5000
        budgets = None if args.ignore_pdbs or args.dry_run else BudgetCheck(cluster)
        evictors: dict[str, DefaultEvictor] = {}

        def cycle(order: ListingOrder) -> tuple[CycleResult, PodEvictor]:
            """One cycle on ``cluster`` in ``order``; what it changed is undone afterwards."""
            if budgets is not None:
                budgets.new_cycle()
            grace = prepared.grace_period_seconds
            evictor = PodEvictor(cluster, Limits.from_policy(prepared), budgets, view=view, grace_period_seconds=grace)
            observe = _progress(_enabled_count(prepared)) if large and not order.shuffles else None
            with cluster.trial():
                explain = args.explain and not order.shuffles  # verdicts are reported for the first order only
                result = run_cycle(prepared, cluster, now, evictor, explain, observe, order, evictors)
            return result, evictor

        try:
            prepared = prepare_policy(policy)
            if samples is None:
                result, evictor = cycle(ListingOrder())
                ranged = None
            else:
                result, evictor, ranged = forecast(cycle, samples, args.seed, jobs)
        except UnrunnablePolicy as error:
            raise UsageError(str(error)) from None
        document = report(result, evictor.evictions, args.explain)
        document["failures"] = [failure._asdict() for failure in evictor.failures]
        if ranged is not None:
            document["forecast"] = ranged.document()
        if args.format == "json":
            jsontext.write(document, sys.stdout)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(render_text(document, result.errors, evictor.failures))
        for problem in result.errors:
            print(f"desched: warning: {problem}", file=sys.stderr)
        return EXIT_OK


def _samples(text: str | None) -> int | None:
    """``--samples``: a count from 1 to :data:`~desched.executor.forecast.MAX_SAMPLES`, or ``None`` when not given."""
    from desched.executor.forecast import MAX_SAMPLES

    if text is None:
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_SAMPLES:
        raise UsageError(f"--samples {text!r}: give a whole number from 1 to {MAX_SAMPLES}")
    return count


class RunCommand:
    extra = "executor"
    help = "run the policy against the live cluster (one cycle, or every --interval)"
    description = (
        "Evict through the Eviction API what the policy selects, with upstream's decisions; --dry-run evicts "
        "nothing. In a pod, the service account is used; otherwise the kubeconfig."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from desched.executor.live import add_arguments

        add_arguments(parser)

    def run(self, args: argparse.Namespace) -> int:
        from desched.executor.live import run

        return run(args)


SIMULATE = SimulateCommand()
RUN = RunCommand()
