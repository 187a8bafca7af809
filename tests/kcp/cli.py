"""``scripts/control-plane install|up|down|status``: the control plane from a shell.

Exit codes: 0 success; 1 the step failed (the message says why); 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tests.kcp import controlplane, install
from tests.kcp.controlplane import ControlPlane, StartError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="control-plane", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="install etcd and build kube-apiserver and kube-controller-manager (cached)")
    start = commands.add_parser("up", help="start a control plane on 127.0.0.1 and print its kubeconfig")
    start.add_argument(
        "--controllers",
        default=",".join(controlplane.DEFAULT_CONTROLLERS),
        help="kube-controller-manager controllers (default: %(default)s)",
    )
    for name, text in (("down", "stop a control plane"), ("status", "show the installation and control planes")):
        command = commands.add_parser(name, help=text)
        command.add_argument("directory", nargs="?", help="its directory (default: the one 'up' started last)")
    args = parser.parse_args(argv)
    handler = {"install": _install, "up": _up, "down": _down, "status": _status}[args.command]
    return handler(args)


def _install(args: argparse.Namespace) -> int:
    try:
        found = install.install()
    except install.InstallError as error:
        print(f"control-plane: install failed: {error}", file=sys.stderr)
        return 1
    print(f"installed: Kubernetes from Debian {found.version} ({found.bin_dir}), etcd {found.etcd}")
    return 0


def _up(args: argparse.Namespace) -> int:
    found = install.find()
    if found is None:
        print("control-plane: not installed; run 'scripts/control-plane install' first", file=sys.stderr)
        return 1
    controlplane.sweep()
    try:
        plane = controlplane.up(found, controllers=[name for name in args.controllers.split(",") if name])
    except StartError as error:
        print(f"control-plane: up failed: {error}", file=sys.stderr)
        return 1
    pointer = controlplane.current_pointer()
    pointer.parent.mkdir(parents=True, exist_ok=True)
    pointer.write_text(plane.directory + "\n", encoding="utf-8")
    print(f"server: {plane.server}\ndirectory: {plane.directory}\nexport KUBECONFIG={plane.kubeconfig}")
    return 0


def _chosen(directory: str | None) -> ControlPlane | None:
    if directory is None:
        try:
            directory = controlplane.current_pointer().read_text(encoding="utf-8").strip()
        except OSError:
            return None
    try:
        return ControlPlane.load(directory)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _down(args: argparse.Namespace) -> int:
    plane = _chosen(args.directory)
    if plane is None:
        print("control-plane: nothing to stop")
        return 0
    plane.stop()
    pointer = controlplane.current_pointer()
    if pointer.is_file() and pointer.read_text(encoding="utf-8").strip() == plane.directory:
        pointer.unlink()
    print(f"stopped {plane.directory}")
    return 0


def _status(args: argparse.Namespace) -> int:
    found = install.find()
    if found is None:
        failure = install.last_failure()
        print("installation: none" + (f" (last attempt failed: {failure})" if failure else ""))
    else:
        print(f"installation: Kubernetes from Debian {found.version} in {found.bin_dir}; etcd {found.etcd}")
    chosen = _chosen(args.directory)
    shown = [chosen] if args.directory else controlplane.planes()
    for plane in shown:
        if plane is None:
            continue
        marker = " (current)" if chosen is not None and plane.directory == chosen.directory else ""
        states = ", ".join(f"{name} {'running' if up else 'stopped'}" for name, up in plane.running().items())
        print(f"{plane.directory}{marker}: {plane.server}: {states}")
    if not shown or shown == [None]:
        print("control planes: none")
    running = chosen is not None and all(chosen.running().values()) and bool(chosen.processes)
    return 0 if running else 1


if __name__ == "__main__":
    sys.exit(main())
