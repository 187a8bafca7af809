"""``scripts/image install|build|run|pin-digest``: the desched image from a shell (see docs/image.md).

Exit codes: 0 success; 1 the step failed (the message says why); 2 usage errors. ``run`` exits with the command's
status (128 + the signal if a signal ended it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.image import build, pin, sandbox


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="image", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="apt-get install the build tools: " + ", ".join(build.APT_PACKAGES))
    made = commands.add_parser("build", help="build the image offline (cached by its inputs) and print its summary")
    made.add_argument("--install", action="store_true", help="install the build tools first")
    run = commands.add_parser("run", help="run the built image's entrypoint as deploy/ does (needs root)")
    run.add_argument("--volume", action="append", default=[], metavar="DIR:PATH", help="bind DIR read-only at PATH")
    run.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="set a variable")
    run.add_argument("--entrypoint", help="run this program instead of the image's entrypoint")
    run.add_argument("--workdir", help="the working directory (default: the image's)")
    run.add_argument("arguments", nargs=argparse.REMAINDER, help="the entrypoint's arguments (after --)")
    pinned = commands.add_parser("pin-digest", help="write a released digest into the deploy manifests and chart")
    pinned.add_argument("--deploy", type=Path, default=build.ROOT / "deploy", help="default: %(default)s")
    pinned.add_argument("version", help="the released version, e.g. 0.2.0")
    pinned.add_argument("digest", help="the image's digest, sha256:<64 hex digits>")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            build.install()
        elif args.command == "build":
            if args.install:
                build.install()
            print(json.dumps(build.build().summary(), indent=2))
        elif args.command == "run":
            return _run(parser, args)
        else:
            for path in pin.pin(args.deploy, args.version, args.digest):
                print(f"pinned {path}")
    except (build.InstallError, build.BuildError, sandbox.SandboxError, pin.PinError) as error:
        print(f"image: {args.command} failed: {error}", file=sys.stderr)
        return 1
    return 0


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    volumes: list[tuple[Path, str]] = []
    for volume in args.volume:
        source, separator, target = volume.partition(":")
        if not separator:
            parser.error(f"--volume {volume}: expected DIR:PATH")
        volumes.append((Path(source).resolve(), target))
    environment: dict[str, str] = {}
    for entry in args.env:
        name, separator, value = entry.partition("=")
        if not separator:
            parser.error(f"--env {entry}: expected NAME=VALUE")
        environment[name] = value
    image = build.find()
    if image is None:
        raise sandbox.SandboxError("no image built from this checkout: run scripts/image build")
    arguments = args.arguments[1:] if args.arguments[:1] == ["--"] else args.arguments
    entrypoint = None if args.entrypoint is None else [args.entrypoint]
    return sandbox.run(image, arguments, volumes, environment, entrypoint, args.workdir)
