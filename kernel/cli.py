"""The ``desched`` command line: one table of commands, built in or added by other packages.

Exit codes (all subcommands): 0 success (lint: no errors, warnings allowed; migrate: nothing to do, or done),
1 findings (lint: errors, or warnings with ``--strict``; migrate ``--check``/``--diff``: files would change), 2 usage
error, unreadable input, invalid configuration, a policy a command refuses, a missing extra, or internal error. Every
exit 2 prints one line starting with ``desched:`` on stderr; tracebacks are shown only with ``DESCHED_DEBUG=1``.

A command is an object with ``help``, ``description``, ``epilog``, ``add_arguments(parser)`` and
``run(args) -> int``, and optionally ``extra``: the ``pip install 'desched[EXTRA]'`` it needs to run. A command
whose extra is missing says so (one line, exit 2) before its options are parsed, but for ``--help``: its parser needs
no extra (``add_arguments`` imports none of the extra's packages), so its help shows without it. Built-in commands are
named in :data:`BUILT_IN` as ``module:attribute``; other packages add theirs through the ``desched.commands``
entry-point group (the executor's ``simulate`` and ``run``, the webhook's ``webhook`` and ``certs``). A command's
module is imported only when the command line names it or asks for the overview, so ``desched lint`` never loads the
executor or webhook stacks, and this module imports no command by name.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from importlib import import_module
from typing import Protocol

from desched.errors import EXIT_ERROR, DeschedError
from desched.runtime.collector import paused, spare_exit
from desched.version import __version__

__all__ = ["BUILT_IN", "EXTENSION_GROUP", "Command", "commands", "main"]

EXTENSION_GROUP = "desched.commands"
BUILT_IN = {
    "lint": "desched.linter.command:LINT",
    "rules": "desched.linter.command:RULES",
    "explain": "desched.linter.command:EXPLAIN",
    "migrate": "desched.migrate.command:MIGRATE",
    "render": "desched.render.command:RENDER",
    "scope": "desched.linter.scope:SCOPE",
}


class Command(Protocol):
    """What a subcommand provides (see the module docstring)."""

    help: str
    description: str | None
    epilog: str | None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _references() -> dict[str, str]:
    """Every command name with its ``module:attribute``: the built-ins, then the installed extensions."""
    from importlib.metadata import entry_points

    found = dict(BUILT_IN)
    for entry in sorted(entry_points(group=EXTENSION_GROUP), key=lambda e: e.name):
        found.setdefault(entry.name, entry.value)
    return found


def _load(reference: str) -> Command:
    module, _, attribute = reference.partition(":")
    command: Command = getattr(import_module(module), attribute)
    return command


def commands(argv: Sequence[str] = ()) -> dict[str, Command]:
    """The command ``argv`` names (only a built-in's module is imported then), else every command."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first in BUILT_IN:
        return {first: _load(BUILT_IN[first])}
    references = _references()
    if first in references:
        return {first: _load(references[first])}
    return {name: _load(reference) for name, reference in references.items()}


#: The help formatter while the parsers are built: argparse makes one for every argument added (to check its
#: metavar), and one sized to the terminal imports shutil, with its compression modules, and asks the terminal each
#: time. Nothing is written then, so any width does; the parsers show help and usage with argparse's own formatter.
_BUILDING = partial(argparse.HelpFormatter, width=80)


def _parser(table: dict[str, Command]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="desched",
        description="Lint, migrate and run Kubernetes descheduler policies.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage or input error. Docs: docs/rules.md",
        formatter_class=_BUILDING,
    )
    parser.add_argument("--version", action="version", version=f"desched {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name, command in table.items():
        sub = subparsers.add_parser(
            name,
            help=command.help,
            description=command.description,
            epilog=getattr(command, "epilog", None),
            formatter_class=_BUILDING,
        )
        command.add_arguments(sub)
    for built in (parser, *subparsers.choices.values()):
        built.formatter_class = argparse.HelpFormatter
    return parser


def _needs(table: dict[str, Command]) -> Callable[[], None]:
    """What raises the missing-extra :class:`~desched.errors.UsageError` of the one command ``table`` names."""
    if len(table) != 1:
        return lambda: None
    [(name, command)] = table.items()
    extra: str | None = getattr(command, "extra", None)
    if not extra:
        return lambda: None
    from desched.extras import require  # only a command of an extra asks for it

    return partial(require, extra, f"the {name} command")


def _asks_for_help(arguments: Sequence[str]) -> bool:
    """Whether ``arguments`` hold ``-h`` or ``--help`` (or an abbreviation argparse would take for it)."""
    return any(arg == "-h" or (len(arg) > 3 and "--help".startswith(arg)) for arg in arguments)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script passes it to ``sys.exit``)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        with paused():  # importing the command makes thousands of objects and no garbage: no collection pays off
            table = commands(arguments)
            needs = _needs(table)
            if not _asks_for_help(arguments):  # the missing extra before any usage error, but --help shows the flags
                needs()
            try:
                parser = _parser(table)
            except ImportError:  # a parser that needs the extra after all: say which, not what failed to import
                needs()
                raise
        args = parser.parse_args(arguments)
        needs()
        if argv is None and args.command in BUILT_IN:
            spare_exit()  # the program ends with this short command (the servers of the extras shut down as ever)
        return int(table[args.command].run(args))
    except (DeschedError, KeyError) as exc:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
