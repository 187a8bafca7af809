"""``desched lint``, ``desched rules`` and ``desched explain``: the lint engine on files, and its rule catalogue.

Exit codes of ``lint``: 0 no errors (warnings allowed; ``--exit-zero`` always 0), 1 errors, or warnings with
``--strict``, 2 unreadable input or invalid configuration (one ``desched:`` line each on stderr; the readable files
are still linted and reported).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from desched.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from desched.linter.engine import FileResult, Settings
from desched.linter.finding import Finding
from desched.linter.formatters import FORMATTERS, Report, findings_report

__all__ = ["EXPLAIN", "LINT", "RULES", "Explain", "Lint", "Rules"]


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


class Lint:
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
            help="descheduler release the policies run on (default: chart image tag/appVersion, else newest)",
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

    def run(self, args: argparse.Namespace) -> int:
        from desched.linter.engine import lint_file, lint_repository
        from desched.sources import iter_paths

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
                result = lint_file(path, settings, display=args.stdin_filename if path == "-" else None)
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


class Rules:
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


class Explain:
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


LINT, RULES, EXPLAIN = Lint(), Rules(), Explain()


def _split(values: list[str]) -> list[str]:
    from desched.linter import rules

    names = [name for value in values for name in value.split(",") if name.strip()]
    return [rules.resolve(name) for name in names]


def _settings(args: argparse.Namespace) -> tuple[Settings, list[str], bool]:
    from desched import versions
    from desched.linter.config import Config, discover, load

    config = Config()
    if not args.no_config:
        path = args.config or discover()
        if args.config and not os.path.isfile(args.config):
            raise UsageError(f"configuration file {args.config} not found")
        if path:
            config = load(path)
    settings = Settings(config.target, set(config.disabled), dict(config.severities), dict(config.options))
    target = versions.from_option(args.target_version)
    if target is not None:
        settings.target = target
    settings.disabled |= set(_split(args.disable))
    settings.disabled -= set(_split(args.enable))
    return settings, config.ignore + args.ignore, config.strict or args.strict


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
