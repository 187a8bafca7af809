"""``desched simulate`` and ``desched run``: two drivers over one engine (:mod:`desched.executor.framework`).

* ``simulate --policy POLICY --cluster SNAPSHOT [--now RFC3339] [--format text|json] [--explain] [--ignore-pdbs]
  [--dry-run] [--samples [N] [--seed S] [--jobs J]] [--html FILE]`` runs one cycle offline on a snapshot (``kind:
  List`` or multi-document YAML/JSON, as ``kubectl get ... -A -o yaml`` prints it, read by
  :mod:`desched.executor.snapshot`, at most 1 GiB) as a real run makes it: every eviction meets the Eviction
  API's PodDisruptionBudget check (:mod:`desched.executor.budgets`; ``--ignore-pdbs``: it succeeds) and the evicted pod
  stays listed as terminating. ``--dry-run`` predicts upstream's ``--dry-run`` instead: no budget check, and the
  evicted pod is gone for the rest of the cycle. ``--samples N`` runs the cycle over N listing orders
  (:mod:`desched.executor.forecast`); the evictions printed are still the first order's (as listed). ``--html FILE``
  also writes the forecast as one self-contained page (:mod:`desched.executor.page`: each node's utilization before
  and after the cycle against the thresholds, the evictions per plugin, the ``--samples`` ranges, and why pods were
  not evicted); stdout is unchanged.
* ``run --policy POLICY [--dry-run] [--kubeconfig PATH] [--context NAME] [--interval DURATION]`` runs against the live
  cluster (see :mod:`desched.executor.live`).

``POLICY`` is a raw policy, a ConfigMap holding one, Helm chart values, a v1alpha1 policy (converted) or a
KubeDescheduler (rendered). Both refuse a policy with lint errors: the findings go to stderr and the exit code is 2.
JSON output: ``{"evictions": [{namespace, pod, node, profile, plugin}], "failures": [{namespace, pod, node, profile,
plugin, status, message, outcome}], "pluginErrors": [{profile, plugin, message}], "summary": {evicted, byPlugin,
byNode, byNamespace, skippedCycle}}``, plus ``"pods"`` (namespace, pod, node, evictable, reason) with ``--explain``
and ``"forecast"`` (samples, seed, ``assurance``: shuffled, foundSharePercent, probability, statement, ``evicted`` and
``byPlugin`` as ``{min, median, max}``, ``pods``: namespace, pod, node, ``evictedIn`` samples) with ``--samples``
(without N: 91 orders, :data:`~desched.executor.forecast.DEFAULT_SAMPLES`); with ``--samples`` and a
PodDisruptionBudget that a refresh by the disruption controller during the cycle can change
(:meth:`BudgetCheck.may_refresh <desched.executor.budgets.BudgetCheck.may_refresh>`), also ``"budgetRefresh"``
(samples, seed, refreshes, ``evicted`` and ``byPlugin`` as ``{min, max}`` over the same orders with budgets never and
always refreshed: :mod:`desched.executor.refresh`), apart from ``forecast``, whose range is the listing orders' alone.
``failures`` are the evictions tried and not done; ``pluginErrors`` the plugins that failed (the text output's ``plugin
error:`` lines, also warned on stderr): every failure the text output shows is in the JSON too.

Exit codes: 0 the cycle ran (whatever it evicted); 2 usage error (an ``--html`` FILE that cannot be written
included), unreadable policy or snapshot (a snapshot over
1 GiB, not UTF-8, not YAML or JSON, or not a snapshot: :mod:`desched.executor.snapshot`), a policy with lint errors,
a policy that cannot run in this cluster (a missing PriorityClass, ...), or an unreachable cluster.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from desched.errors import UsageError
from desched.executor.load import Loaded, load_policy
from desched.executor.report import render_text, report
from desched.executor.snapshot import read_snapshot
from desched.policy.model import EVICTING_POINTS, Policy
from desched.runtime import jsontext

if TYPE_CHECKING:  # the cycle's modules are imported when a cycle runs, not to parse the command line
    from desched.executor.evictions import Eviction, EvictionFailure
    from desched.executor.forecast import Forecast
    from desched.executor.framework import CycleResult
    from desched.executor.page import Panel
    from desched.executor.refresh import RefreshRange

#: What :func:`_simulate` hands the report: the cycle's result, evictions, failures, forecast, the range with budgets
#: refreshed (``None`` unless one can be) and the page's utilization panels (``None`` without ``--html``).
Simulated = tuple[
    "CycleResult",
    list["Eviction"],
    list["EvictionFailure"],
    "Forecast | None",
    "RefreshRange | None",
    "list[Panel] | None",
]

EXIT_OK, EXIT_ERROR = 0, 2
#: ``--samples`` without N: :data:`desched.executor.forecast.DEFAULT_SAMPLES` (not imported to parse the command line;
#: tests/executor/test_forecast.py holds them equal)
SAMPLES_WITHOUT_N = "91"


def parse_now(text: str | None) -> datetime:
    if not text:
        return datetime.now(timezone.utc)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {text!r} is not an RFC 3339 time (2026-11-22T10:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


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
        parser.add_argument(
            "--cluster",
            required=True,
            metavar="SNAPSHOT",
            help="cluster snapshot (a kubectl List or objects; JSON or YAML, at most 1 GiB); - reads stdin",
        )
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
            nargs="?",
            const=SAMPLES_WITHOUT_N,
            help="run the cycle over N listing orders (the first as listed) and report min, median and max per "
            "plugin and how often each pod is evicted: upstream chooses among equal pods at random; the output "
            f"states how rare a pick N orders find with probability 99 %%. Without N: {SAMPLES_WITHOUT_N} orders, "
            "a pod chosen in 5 %% of orders or more is found with probability 99 %% or more",
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="seed of the shuffled listing orders of --samples (default: 0)"
        )
        parser.add_argument(
            "--jobs",
            type=int,
            metavar="N",
            help="processes that run the --samples orders (default and most: the CPUs this process may use, "
            "and no more than N-1); the forecast is the same for any count",
        )
        parser.add_argument(
            "--html",
            metavar="FILE",
            help="also write the forecast as one self-contained HTML page: node utilization before and after the "
            "cycle against the thresholds, evictions per plugin (with --samples, their ranges) and why pods were "
            "not evicted",
        )
        parser.add_argument("--target-version", metavar="v0.NN", help="descheduler release the policy runs on")
        parser.epilog = "Exit codes: 0 the cycle ran; 2 usage error, unreadable input or a policy with lint errors."

    def run(self, args: argparse.Namespace) -> int:
        samples = _samples(args.samples)
        if args.jobs is not None and args.jobs < 1:
            raise UsageError(f"--jobs {args.jobs}: give at least 1")
        if args.html is not None:
            _check_writable(args.html)
        loaded = load_policy(args.policy, args.target_version)
        now = parse_now(args.now)
        result, evictions, failures, ranged, refreshed, panels = _simulate(args, loaded, now, samples)
        document = report(result, evictions, args.explain)
        document["failures"] = [failure._asdict() for failure in failures]
        if ranged is not None:
            document["forecast"] = ranged.document()
        if refreshed is not None:
            document["budgetRefresh"] = refreshed.document()
        if panels is not None:
            _write_page(args, document, panels, result, now)
        if args.format == "json":
            jsontext.write(document, sys.stdout)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(render_text(document, result.errors, failures))
        for problem in result.errors:
            print(f"desched: warning: {problem}", file=sys.stderr)
        return EXIT_OK


def _simulate(args: argparse.Namespace, loaded: Loaded, now: datetime, samples: int | None) -> Simulated:
    """The cycle (or ``--samples`` cycles) of the loaded policy, with its release's decisions, on the snapshot (each
    a first cycle: a new descheduler's, or a dry run's, which lists anew): its result, evictions, failures, forecast
    (``None`` without ``--samples``) and range with budgets refreshed (``None`` unless one can be). The cluster is
    gone when it returns: the report, which reads none of it, reuses its memory."""
    from desched.executor.budgets import BudgetCheck
    from desched.executor.cluster import Cluster, bulk_load
    from desched.executor.defaultevictor import DefaultEvictor, UnrunnablePolicy
    from desched.executor.evictions import Limits, PodEvictor, SameCycle
    from desched.executor.forecast import forecast
    from desched.executor.framework import ListingOrder, prepare_policy, run_cycle
    from desched.executor.refresh import refresh_range

    with bulk_load():
        cluster = Cluster.from_objects(read_snapshot(args.cluster))
    view = SameCycle.DRY_RUN if args.dry_run else SameCycle.REAL
    large = sys.stderr.isatty() and len(cluster.pods) > 5000
    budgets = None if args.ignore_pdbs or args.dry_run else BudgetCheck(cluster)
    evictors: dict[str, DefaultEvictor] = {}

    def cycle(order: ListingOrder, check: BudgetCheck | None = budgets) -> tuple[CycleResult, PodEvictor]:
        """One cycle on ``cluster`` in ``order`` with the budget ``check``; what it changed is undone afterwards."""
        if check is not None:
            check.new_cycle()
        grace = prepared.grace_period_seconds
        evictor = PodEvictor(cluster, Limits.from_policy(prepared), check, view=view, grace_period_seconds=grace)
        observe = _progress(_enabled_count(prepared)) if large and not order.shuffles else None
        with cluster.trial():
            # verdicts are reported (and shown on the page) for the first order only
            explain = (args.explain or args.html is not None) and not order.shuffles
            result = run_cycle(prepared, cluster, now, evictor, explain, observe, order, evictors, loaded.release)
        return result, evictor

    try:
        prepared = prepare_policy(loaded.policy)
        refreshed: RefreshRange | None = None
        if samples is None:
            result, evictor = cycle(ListingOrder())
            ranged = None
        else:
            result, evictor, ranged = forecast(cycle, samples, args.seed, args.jobs)
            if budgets is not None and budgets.may_refresh():
                refreshing = BudgetCheck(cluster, refresh=True)
                _, _, always = forecast(lambda order: cycle(order, refreshing), samples, args.seed, args.jobs)
                refreshed = refresh_range(ranged, always)
    except UnrunnablePolicy as error:
        raise UsageError(str(error)) from None
    panels = None
    if args.html is not None:
        from desched.executor.page import utilization

        panels = []  # a skipped cycle has no utilization to show
        if not result.skipped:
            errors, release = result.errors, loaded.release
            panels = utilization(prepared, cluster, now, evictors, evictor, evictor.evictions, errors, release)
    cluster.release()
    return result, evictor.evictions, evictor.failures, ranged, refreshed, panels


def _check_writable(path: str) -> None:
    """Refuse an ``--html`` FILE that cannot be written before the cycle runs (a UsageError, exit 2)."""
    import os

    folder = os.path.dirname(path) or "."
    if os.path.isdir(path) or not os.path.isdir(folder):
        raise UsageError(f"--html {path}: not a file in an existing directory")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise UsageError(f"--html {path}: not writable")


def _write_page(
    args: argparse.Namespace, document: dict[str, Any], panels: list[Panel], result: CycleResult, now: datetime
) -> None:
    """Write the ``--html`` page; a write that fails is a UsageError (exit 2)."""
    from desched.executor.page import render

    page = render(document, panels, result.verdicts, now, (args.policy, args.cluster), args.dry_run)
    try:
        with open(args.html, "w", encoding="utf-8") as sink:
            sink.write(page)
    except OSError as error:
        raise UsageError(f"--html {args.html}: {error.strerror}") from None


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
