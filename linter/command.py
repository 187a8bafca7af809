"""``desched lint``, ``desched rules`` and ``desched explain``: the lint engine on files, and its rule catalogue.

Exit codes of ``lint``: 0 no errors (warnings allowed; ``--exit-zero`` always 0), 1 errors, or warnings with
``--strict``, 2 unreadable input or invalid configuration (one ``desched:`` line each on stderr; the readable files
are still linted and reported), or an invalid option value (``--target-version``, ``--kubernetes-version``: nothing
is linted).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from desched.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from desched.linter.engine import Settings
from desched.linter.formatters import FORMATTERS, Report, findings_report
from desched.plugins import DISTRIBUTIONS

__all__ = ["EXPLAIN", "LINT", "RULES", "ExplainCommand", "LintCommand", "RulesCommand"]


class _FormatAction(argparse.Action):
    """``--format F`` appends a format; ``--output PATH`` (or ``-o PATH``) binds to the format before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        formats: list[list[str | None]] = getattr(namespace, "formats", None) or []
        if "--output" in self.option_strings:  # -o or --output, however it was spelled
            if not formats or formats[-1][1] is not None:
                formats.append([None, values])
            else:
                formats[-1][1] = values
        else:
            formats.append([values, None])
        namespace.formats = formats


class LintCommand:
    """``desched lint``."""

    help = "check descheduler policies (files, directories or - for stdin)"
    description = None
    epilog = "Exit codes: 0 clean, 1 findings, 2 usage or input error. Docs: docs/rules.md"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
        parser.add_argument(
            "-f",
            "--format",
            action=_FormatAction,
            dest="formats",
            choices=sorted(FORMATTERS),
            help="output format; repeat for several (default: text)",
        )
        parser.add_argument(
            "-o",
            "--output",
            action=_FormatAction,
            dest="formats",
            metavar="FILE",
            help="write the preceding --format to FILE instead of stdout",
        )
        parser.add_argument(
            "--target-version",
            metavar="v0.NN",
            help="descheduler release the policies run on (default: the release deployed with each, else the newest)",
        )
        parser.add_argument(
            "--kubernetes-version",
            metavar="1.NN",
            help="Kubernetes version of the cluster the descheduler runs on, for DS614 (default: kubernetes-version in "
            ".desched.yaml; without either DS614 is silent)",
        )
        parser.add_argument(
            "--distribution",
            choices=list(DISTRIBUTIONS),
            help="descheduler build that runs the policies (default: openshift for the OpenShift operator's ConfigMap "
            "and KubeDescheduler, else upstream)",
        )
        parser.add_argument(
            "-c", "--config", metavar="FILE", help="configuration file (default: discovered .desched.yaml)"
        )
        parser.add_argument("--no-config", action="store_true", help="ignore configuration files")
        parser.add_argument(
            "--disable", action="append", default=[], metavar="RULES", help="comma-separated rules to skip"
        )
        parser.add_argument(
            "--enable",
            action="append",
            default=[],
            metavar="RULES",
            help="comma-separated rules to run even if the configuration disables them",
        )
        parser.add_argument("--ignore", action="append", default=[], metavar="GLOB", help="paths not to lint")
        parser.add_argument("--strict", action="store_true", help="warnings fail the run too (exit 1)")
        parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
        parser.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour text output")
        parser.add_argument("--stdin-filename", metavar="NAME", help="file name to report for - (stdin)")
        parser.add_argument(
            "--alone",
            action="store_true",
            help="judge each file named on its own, not in the deploy units of its repository (as the admission "
            "webhook sees one object)",
        )

    def run(self, args: argparse.Namespace) -> int:
        from desched.linter.lint import lint_paths

        settings, ignore, strict = _settings(args)
        formats = args.formats or [["text", None]]
        for name, output in formats:
            if name is None:
                raise UsageError(f"--output {output} must follow a --format")
        run = lint_paths(args.paths or ["."], settings, ignore, args.stdin_filename, context=not args.alone)
        report = findings_report(run.findings, run.files, run.sources, args.color, run.skipped, run.unchecked)
        _write(report, formats)
        for file in run.unchecked:
            print(f"desched: note: {file}: no descheduler policy found", file=sys.stderr)
        for line in run.passed:
            print(f"desched: note: skipped {line}", file=sys.stderr)
        for line in run.unreadable:
            print(f"desched: {line}", file=sys.stderr)
        if run.unreadable:
            return EXIT_ERROR
        counts = report.counts()
        failed = counts["errors"] > 0 or (strict and counts["warnings"] > 0)
        return EXIT_FINDINGS if failed and not args.exit_zero else EXIT_OK


class RulesCommand:
    """``desched rules``."""

    help = "list every rule"
    description = None
    epilog = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    def run(self, args: argparse.Namespace) -> int:
        from desched.linter.docs import render_rules

        sys.stdout.write(render_rules(args.format))
        return EXIT_OK


class ExplainCommand:
    """``desched explain``."""

    help = "explain one rule"
    description = None
    epilog = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("rule", metavar="RULE", help="rule ID (DS302) or name (threshold-range)")

    def run(self, args: argparse.Namespace) -> int:
        from desched.linter.docs import explain

        sys.stdout.write(explain(args.rule))
        return EXIT_OK


LINT, RULES, EXPLAIN = LintCommand(), RulesCommand(), ExplainCommand()


def _split(values: list[str]) -> list[str]:
    from desched.linter import rules

    names = [name for value in values for name in value.split(",") if name.strip()]
    return [rules.resolve(name) for name in names]


def _settings(args: argparse.Namespace) -> tuple[Settings, list[str], bool]:
    from desched import versions
    from desched.linter.config import Config
    from desched.linter.lint import load_config, settings_from

    config = Config()
    if not args.no_config:
        if args.config and not os.path.isfile(args.config):
            raise UsageError(f"configuration file {args.config} not found")
        config = load_config(args.config)
    settings = settings_from(config)
    target = versions.from_option(args.target_version)
    if target is not None:
        settings = settings._replace(target=target, target_source="--target-version")
    if args.distribution is not None:
        settings = settings._replace(distribution=args.distribution)
    kubernetes = versions.kubernetes_from_option(args.kubernetes_version)
    if kubernetes is not None:
        settings = settings._replace(kubernetes=kubernetes)
    disabled = (set(settings.disabled) | set(_split(args.disable))) - set(_split(args.enable))
    return settings._replace(disabled=frozenset(disabled)), config.ignore + args.ignore, config.strict or args.strict


def _write(report: Report, formats: list[list[str | None]]) -> None:
    from desched.linter.formatters import get

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
