"""The ``desched`` command line.

Exit codes (all subcommands): 0 success (lint: no errors, warnings allowed; migrate: nothing to do, or done),
1 findings (lint: errors, or warnings with ``--strict``; migrate ``--check``/``--diff``: files would change), 2 usage
error, unreadable input, invalid configuration, a policy migrate refuses, or internal error. Every exit 2 prints one
line starting with ``desched:`` on stderr; tracebacks are shown only with ``DESCHED_DEBUG=1``.

Subcommands import what they need when they run, so ``desched lint`` never loads the executor or webhook stacks.
Other packages add subcommands through the ``desched.commands`` entry-point group (the executor's ``simulate`` and
``run``): an object with ``help``, ``description``, ``add_arguments(parser)`` and ``run(args) -> int``. They are loaded
only when the command line names one of them or asks for help, and this package never imports them by name.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """A problem with how desched was called; printed as one line, exit 2."""


class _FormatAction(argparse.Action):
    """``--format F`` appends a format; ``--output PATH`` binds to the format before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        formats: list[list[str | None]] = getattr(namespace, "formats", None) or []
        if option_string == "--output":
            if not formats or formats[-1][1] is not None:
                formats.append([None, values])
            else:
                formats[-1][1] = values
        else:
            formats.append([values, None])
        namespace.formats = formats


_EXTENSION_GROUP = "desched.commands"
_BUILT_IN = ("lint", "rules", "explain", "migrate", "render", "scope")


def _extensions(argv: Sequence[str]) -> dict[str, Any]:
    """The registered extension commands, when ``argv`` names one or asks for help; else nothing (lint stays light)."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first in _BUILT_IN or (first is None and not {"-h", "--help"} & set(argv)):
        return {}
    from importlib.metadata import entry_points

    return {entry.name: entry.load() for entry in sorted(entry_points(group=_EXTENSION_GROUP), key=lambda e: e.name)}


def _parser(extensions: dict[str, Any] | None = None) -> argparse.ArgumentParser:
    from .formatters import FORMATTERS

    parser = argparse.ArgumentParser(
        prog="desched",
        description="Lint, migrate and run Kubernetes descheduler policies.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage or input error. Docs: docs/rules.md",
    )
    parser.add_argument("--version", action="version", version=f"desched {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    lint = commands.add_parser("lint", help="check descheduler policies (files, directories or - for stdin)")
    lint.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
    lint.add_argument(
        "-f",
        "--format",
        action=_FormatAction,
        dest="formats",
        choices=sorted(FORMATTERS),
        help="output format; repeat for several (default: text)",
    )
    lint.add_argument(
        "-o",
        "--output",
        action=_FormatAction,
        dest="formats",
        metavar="FILE",
        help="write the preceding --format to FILE instead of stdout",
    )
    lint.add_argument(
        "--target-version",
        metavar="v0.NN",
        help="descheduler release the policies run on (default: chart image tag/appVersion, else newest)",
    )
    lint.add_argument("-c", "--config", metavar="FILE", help="configuration file (default: discovered .desched.yaml)")
    lint.add_argument("--no-config", action="store_true", help="ignore configuration files")
    lint.add_argument("--disable", action="append", default=[], metavar="RULES", help="comma-separated rules to skip")
    lint.add_argument(
        "--enable",
        action="append",
        default=[],
        metavar="RULES",
        help="comma-separated rules to run even if the configuration disables them",
    )
    lint.add_argument("--ignore", action="append", default=[], metavar="GLOB", help="paths not to lint")
    lint.add_argument("--strict", action="store_true", help="warnings fail the run too (exit 1)")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
    lint.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour text output")
    lint.add_argument("--stdin-filename", metavar="NAME", help="file name to report for - (stdin)")

    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    explain = commands.add_parser("explain", help="explain one rule")
    explain.add_argument("rule", metavar="RULE", help="rule ID (DS302) or name (threshold-range)")

    migrate = commands.add_parser(
        "migrate",
        help="rewrite descheduler/v1alpha1 policies as v1alpha2, keeping everything else as written",
        description=(
            "Convert every descheduler/v1alpha1 DeschedulerPolicy (raw, in a ConfigMap, in Helm values) to "
            "descheduler/v1alpha2 with upstream v0.30's algorithm, keeping comments, key order and quoting of "
            "everything else. What upstream refuses is an error and the file is left untouched. Prints the result "
            "by default (several inputs: each changed file after a '# ==> FILE <==' line). Conversion notes go to "
            "stderr as FILE:LINE: note: ... and into the file as '# desched migrate:' comments. See "
            "docs/migration.md."
        ),
        epilog=(
            "Exit codes: 0 nothing to migrate, or migrated; 1 --check or --diff found files to migrate; 2 a file "
            "could not be read or migrated (it is left untouched; the other files are still processed)."
        ),
    )
    migrate.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
    # The last of --in-place/--check/--diff wins, so that a pre-commit hook's `args: [--in-place]` overrides its
    # `entry: desched migrate --check`.
    migrate.set_defaults(mode="print")
    migrate.add_argument(
        "-i",
        "--in-place",
        dest="mode",
        action="store_const",
        const="in-place",
        help="rewrite changed files (atomically)",
    )
    migrate.add_argument(
        "--check", dest="mode", action="store_const", const="check", help="list files that would change; exit 1 if any"
    )
    migrate.add_argument(
        "--diff",
        dest="mode",
        action="store_const",
        const="diff",
        help="print a unified diff; exit 1 if anything would change (the last of --in-place/--check/--diff wins)",
    )
    migrate.add_argument(
        "--target-version",
        metavar="v0.NN",
        help="descheduler release the output is for (default: Helm values' image.tag or Chart.yaml appVersion, "
        "else newest); v0.34+ writes DefaultEvictor podProtections instead of the deprecated booleans",
    )
    migrate.add_argument(
        "--upstream-compatible",
        action="store_true",
        help="reproduce upstream's conversion exactly, including what it loses (includedTaints, ...)",
    )
    migrate.add_argument(
        "--merge-profiles", action="store_true", help="fold the one-profile-per-strategy output into one profile"
    )
    migrate.add_argument("-q", "--quiet", action="store_true", help="no notes or 'migrated FILE' lines on stderr")
    _add_scope_parser(commands)
    render = commands.add_parser(
        "render",
        help="print the DeschedulerPolicy the OpenShift operator generates for a KubeDescheduler",
        description=(
            "Render every KubeDescheduler (operator.openshift.io/v1) of FILE the way the Kube Descheduler Operator "
            "does, and print the DeschedulerPolicy it writes into ConfigMap cluster, key policy.yaml."
        ),
        epilog="Exit codes: 0 rendered; 2 unreadable input, no KubeDescheduler, or a CR the operator refuses.",
    )
    render.add_argument("file", metavar="FILE", help="file with a KubeDescheduler; - reads stdin")
    render.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="a namespace that exists when the operator starts (repeatable; openshift-* ones are protected; "
        "the operator's own namespace is always there)",
    )
    render.add_argument(
        "--prometheus-host", metavar="HOST", help="host of route openshift-monitoring/prometheus-k8s (for KubeVirt)"
    )
    for name, command in (extensions or {}).items():
        extension = commands.add_parser(name, help=command.help, description=command.description)
        command.add_arguments(extension)
    return parser


def _add_scope_parser(subparsers: Any) -> None:
    """Register ``scope`` on the ``add_subparsers()`` object of the ``desched`` parser."""
    scope = subparsers.add_parser(
        "scope",
        help="report which workloads each policy may evict, and why not",
        description=(
            "Evaluate every descheduler policy against the workloads of the inputs (Deployments, StatefulSets, "
            "DaemonSets, Jobs, Pods, ... with their PDBs, HPAs, Namespaces, PriorityClasses and PVCs) and report, "
            "per workload, whether an enabled deschedule/balance plugin may evict its pods, by which "
            "profile/plugin, the reasons when out of scope and the PodDisruptionBudgets covering it."
        ),
        epilog="Exit codes: 0 success; 2 usage error, unreadable input or no policy found.",
    )
    scope.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or directories with policies and manifests (default: . unless --cluster or --kubeconfig is "
        "given); - reads stdin",
    )
    scope.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="SNAPSHOT",
        help="output of 'kubectl get <kinds> -A -o yaml' (a kind: List) to read workloads from; repeatable",
    )
    scope.add_argument(
        "--kubeconfig",
        nargs="?",
        const="",
        metavar="PATH",
        help="also read workloads from the live cluster, read-only (without PATH: KUBECONFIG or ~/.kube/config)",
    )
    scope.add_argument("--context", metavar="NAME", help="kubeconfig context for --kubeconfig (default: current)")
    scope.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="PATH",
        help="take the policies only from this file (repeatable) instead of from PATH and the snapshots",
    )
    scope.add_argument(
        "--target-version",
        metavar="v0.NN",
        help="descheduler release the policies run on (default: chart image tag/appVersion, else newest)",
    )
    scope.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    scope.add_argument("--all", action="store_true", help="also list every profile/plugin verdict with its notes")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script passes it to ``sys.exit``)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    extensions = _extensions(arguments)
    parser = _parser(extensions)
    args = parser.parse_args(arguments)
    try:
        if args.command in extensions:
            return int(extensions[args.command].run(args))
        if args.command == "lint":
            return _lint(args)
        if args.command == "rules":
            from .docs import render_rules

            sys.stdout.write(render_rules(args.format))
            return EXIT_OK
        if args.command == "explain":
            from .docs import explain

            sys.stdout.write(explain(args.rule))
            return EXIT_OK
        if args.command == "migrate":
            return _migrate(args)
        if args.command == "render":
            from .openshift.command import RenderFailure
            from .openshift.command import run as render

            try:
                return render(args.file, args.namespace, args.prometheus_host)
            except RenderFailure as exc:
                raise UsageError(str(exc)) from None
        if args.command == "scope":
            from .workloads.command import run as scope

            return scope(args)
    except (UsageError, KeyError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        print(f"desched: {message}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # the last line of defence: one line, no traceback
        if os.environ.get("DESCHED_DEBUG"):
            raise
        print(
            f"desched: internal error: {type(exc).__name__}: {exc} (set DESCHED_DEBUG=1 for details)", file=sys.stderr
        )
        return EXIT_ERROR
    parser.error(f"unknown command {args.command}")
    return EXIT_ERROR  # pragma: no cover


def _split(values: list[str]) -> list[str]:
    from . import rules

    names = [name for value in values for name in value.split(",") if name.strip()]
    return [rules.resolve(name) for name in names]


def _settings(args: argparse.Namespace) -> tuple[Any, list[str], bool]:
    from . import versions
    from .config import Config, ConfigError, discover, load
    from .engine import Settings

    config = Config()
    if not args.no_config:
        path = args.config or discover()
        if args.config and not os.path.isfile(args.config):
            raise UsageError(f"configuration file {args.config} not found")
        if path:
            try:
                config = load(path)
            except ConfigError as exc:
                raise UsageError(str(exc)) from None
    settings = Settings(config.target, set(config.disabled), dict(config.severities), dict(config.options))
    if args.target_version:
        try:
            settings.target = versions.parse(args.target_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    settings.disabled |= set(_split(args.disable))
    settings.disabled -= set(_split(args.enable))
    return settings, config.ignore + args.ignore, config.strict or args.strict


def _lint(args: argparse.Namespace) -> int:
    from .engine import FileResult, lint_file, lint_repository, lint_text
    from .finding import Finding
    from .sources import SourceError, iter_paths

    settings, ignore, strict = _settings(args)
    formats = args.formats or [["text", None]]
    for name, output in formats:
        if name is None:
            raise UsageError(f"--output {output} must follow a --format")
    unreadable: list[str] = []

    def on_error(path: str, reason: str) -> None:
        unreadable.append(f"cannot read {path}: {reason}")

    findings: list[Finding] = []
    sources: dict[str, str] = {}
    kept: list[FileResult] = []  # files with policies or other documents, for the repository rules
    files = 0
    for path in iter_paths(args.paths or ["."], ignore, on_error):
        try:
            if path == "-":
                from .sources import read_text

                display = args.stdin_filename or "-"
                try:
                    result = lint_text(display, read_text("-"), settings)
                except SourceError as exc:
                    findings.append(Finding("DS001", "error", display, exc.line, exc.column, exc.message))
                    files += 1
                    continue
            else:
                result = lint_file(path, settings)
        except OSError as exc:
            on_error(path, exc.strerror or str(exc))
            continue
        files += 1
        if result.findings:
            findings.extend(result.findings)
            sources[result.file] = result.text
        if result.policies or result.others:
            kept.append(result)
    texts = {result.file: result.text for result in kept}
    for finding in lint_repository(kept, settings):
        findings.append(finding)
        sources.setdefault(finding.file, texts.get(finding.file, ""))
    report = findings_report(findings, files, sources, args.color)
    _write(report, formats)
    for line in unreadable:
        print(f"desched: {line}", file=sys.stderr)
    if unreadable:
        return EXIT_ERROR
    counts = report.counts()
    failed = counts["errors"] > 0 or (strict and counts["warnings"] > 0)
    return EXIT_FINDINGS if failed and not args.exit_zero else EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    """``desched migrate``; the converter and file rewriting load only here."""
    from . import versions
    from .migrate.command import run

    target = None
    if args.target_version:
        try:
            target = versions.parse(args.target_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return run(
        args.paths or ["."],
        mode=args.mode,
        target=target,
        upstream_compatible=args.upstream_compatible,
        merge_profiles=args.merge_profiles,
        quiet=args.quiet,
    )


def findings_report(findings: list[Any], files: int, sources: dict[str, str], color: str) -> Any:
    """A formatter :class:`~linter.formatters.Report` of ``findings`` (``color``: auto, always or never)."""
    from . import rules
    from .finding import Finding, RuleInfo
    from .formatters import Report

    infos = {
        module.ID: RuleInfo(
            module.ID, module.NAME, module.SUMMARY, module.RATIONALE, module.REMEDIATION, module.SEVERITY
        )
        for module in rules.all_rules()
    }
    use_color = color == "always" or (color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    return Report(sorted(findings, key=Finding.sort_key), files, infos, sources, __version__, use_color)


def _write(report: Any, formats: list[list[str | None]]) -> None:
    from .formatters import get

    for name, output in formats:
        assert name is not None
        text = get(name)(report)
        if output is None:
            sys.stdout.write(text)
            sys.stdout.flush()
            continue
        try:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
