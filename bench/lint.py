"""Lint benchmarks (issue: linter core): ``desched lint`` side by side with peer tools, in one run.

``python bench/lint.py [--runs N] [--files N] [--checkov-runs N] [--quick] [--json PATH]``. Every tool runs as a
whole process from its own virtual environment (bench/peers.py), with bytecode cached as on a user's machine.

1. Single file (the pre-commit case): ``desched lint FILE``, ``yamllint FILE`` and ``kubernetes-validate FILE`` on
   the same policy file, and ``python -c pass`` as the floor, alternated A B C D A B C D so that drift cancels;
   medians over ``--runs``. Ratio: desched's median over the peer's. Target: desched at most 0.6 of yamllint's time.
2. Repository case: ``--files`` generated files (policies, policy ConfigMaps, Deployments, PDBs) in one tree, each
   tool one process pinned to one core: ``desched lint DIR``, ``yamllint DIR``, ``kubernetes-validate F1 F2 ...`` (it
   takes files, not directories) and ``checkov --framework kubernetes -f F1 -f F2 ...`` (offline: no API key, no
   downloads, no update check), and the reference: a bare libyaml parse of the same files, a whole process of
   desched's interpreter (:data:`PARSE`: ``yaml.load_all(text, Loader=yaml.CSafeLoader)`` of every file, consumed).
   The tools alternate within each round; medians over ``max(3, runs // 4)`` rounds, checkov's over
   ``--checkov-runs``. Speedup: the peer's median over desched's. Targets: desched >= 1,000 files/s, faster than
   kubernetes-validate, faster than checkov, at most twice the libyaml parse's time.
3. GitOps case: 200 Flux HelmReleases, Argo CD Applications (values as a string) and kustomizations with
   ``helmCharts`` (one cluster each, sharing Deployments and PDBs), ``desched lint DIR`` against ``yamllint DIR``,
   pinned to one core, alternated; medians over ``max(5, runs // 2)`` rounds. Target: faster than yamllint.
4. Hostile files (bench/corpus.py ``HOSTILE``): ``desched lint --format json FILE`` on each, pinned to one core;
   median seconds and the highest peak RSS over ``--hostile-runs``, and ``yamllint FILE`` on the issue's file (empty
   profiles up to 8 MiB) over ``--hostile-peer-runs`` (it takes minutes), alternated. Targets: every file within
   10 s and 500 MiB (README.md, Limits). ``--quick`` makes the files of lines 1 MiB.

Each tool first runs once untimed, its output captured: one that did not really run (an exit code other than its
"ran, maybe with findings" ones, anything on stderr, or its expected output missing) stops the benchmark with its
output; it is never timed. Exit status: 0 when every target is met, 1 when one is missed, 2 when a tool cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from corpus import HOSTILE, POLICY, hostile, write_gitops_tree, write_tree  # noqa: E402
from peers import ENV, checkov_venv, desched_venv, peers_venv, versions  # noqa: E402

from desched.reading.sources import MAX_FILE_BYTES  # noqa: E402

# checkov offline and anonymous: no platform API key (BC_*, PRISMA_*) or checkov settings (CKV_*) from the caller's
# environment; no update check against PyPI.
CHECKOV_ENV = {key: value for key, value in ENV.items() if not key.startswith(("BC_", "PRISMA_", "CKV_"))}
CHECKOV_ENV["CKV_SKIP_PACKAGE_UPDATE_CHECK"] = "true"
CHECKOV_FLAGS = ["--framework", "kubernetes", "--quiet", "--compact", "--skip-download", "--soft-fail"]

PEERS = ("yamllint", "kubernetes-validate")
REPOSITORY_PEERS = ("yamllint", "kubernetes-validate", "checkov", "libyaml")
FLOOR = "python -c pass"
SINGLE_FILE_RATIO = 0.6  # desched's time over yamllint's, one file (issue 39)
PARSE_RATIO = 2.0  # desched's time over a bare libyaml parse of the same files, repository case (issue 39)
# The repository case's reference: every file named on the command line read and parsed by libyaml, as a whole process.
PARSE = """
import sys, yaml
documents = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        documents += sum(1 for _ in yaml.load_all(handle.read(), Loader=yaml.CSafeLoader))
print(f"parsed {len(sys.argv) - 1} files, {documents} documents")
"""


class Bins(NamedTuple):
    """Bin directories of the three environments."""

    desched: str
    peers: str
    checkov: str


@dataclass(frozen=True)
class Tool:
    """One command to time. A run worked when it exits with one of ``codes`` (findings included), writes nothing to
    stderr, and its stdout matches the regular expression ``expect`` (unless empty)."""

    name: str
    label: str
    command: list[str]
    codes: frozenset[int] = frozenset({0, 1})
    expect: str = ""
    env: dict[str, str] = field(default_factory=lambda: ENV)


class ToolError(Exception):
    """A tool that did not run as it should (crash, usage error, missing file): it must not be timed."""


class SingleFile(TypedDict):
    runs: int
    median_ms: dict[str, float]
    ratio: dict[str, float]


class Repository(TypedDict):
    files: int
    runs: dict[str, int]
    seconds: dict[str, float]
    files_per_second: dict[str, float]
    speedup: dict[str, float]


class GitOps(TypedDict):
    files: int
    runs: int
    seconds: dict[str, float]
    files_per_second: dict[str, float]
    speedup: float


class HostileFile(TypedDict):
    name: str
    text: str
    bytes: int
    seconds: float
    peak_mib: float
    findings: dict[str, int]
    yamllint_seconds: float | None


class Hostile(TypedDict):
    runs: int
    peer_runs: int
    limit_seconds: float
    limit_mib: float
    files: list[HostileFile]


class Target(TypedDict):
    text: str
    met: bool


HOSTILE_SECONDS = 10.0  # README.md, Limits: any file under the read limit, on one core
HOSTILE_MIB = 500.0
HOSTILE_PEER = "empty-profiles"  # the file yamllint also reads: issue 23's


def _say(text: str = "") -> None:
    print(text, flush=True)


def _shown(command: list[str], limit: int = 12) -> str:
    more = len(command) - limit
    return shlex.join(command[:limit]) + (f" ... ({more} more arguments)" if more > 0 else "")


def _tail(text: str, lines: int = 25) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join("    " + line for line in kept) if kept else "    (nothing)"


def check(tool: Tool, cwd: str) -> None:
    """Run ``tool`` once, untimed, in ``cwd``; raises :class:`ToolError` with its output unless the run worked."""
    try:
        done = subprocess.run(tool.command, cwd=cwd, env=tool.env, capture_output=True, text=True, check=False)
    except OSError as error:
        raise ToolError(f"{tool.name} cannot start: {error}\n  command: {_shown(tool.command)}") from error
    problems = []
    if done.returncode not in tool.codes:
        problems.append(f"exit code {done.returncode}, not one of {sorted(tool.codes)}")
    if done.stderr.strip():
        problems.append("output on stderr")
    if tool.expect and not re.search(tool.expect, done.stdout):
        problems.append(f"stdout does not match {tool.expect!r}")
    if problems:
        raise ToolError(
            f"{tool.name} did not run properly: {'; '.join(problems)}\n  command: {_shown(tool.command)}\n"
            f"  stderr:\n{_tail(done.stderr)}\n  stdout:\n{_tail(done.stdout)}"
        )


def _time(tool: Tool, cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(tool.command, cwd=cwd, env=tool.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)  # fmt: skip
    return time.perf_counter() - started


def alternate(tools: list[Tool], runs: dict[str, int], cwd: str) -> dict[str, list[float]]:
    """Seconds per run of each tool: rounds of A B C ..., a tool leaving the rounds once it has its ``runs``."""
    times: dict[str, list[float]] = {tool.name: [] for tool in tools}
    for round_ in range(max(runs.values())):
        for tool in tools:
            if round_ < runs[tool.name]:
                times[tool.name].append(_time(tool, cwd))
    return times


def _pinned(command: list[str]) -> list[str]:
    return ["taskset", "-c", "0", *command] if shutil.which("taskset") else command


def single_file(bins: Bins, runs: int) -> SingleFile:
    """The pre-commit case: medians in milliseconds and desched's ratio to each peer (lower is better for desched)."""
    tools = [
        Tool("desched", "desched lint FILE", [os.path.join(bins.desched, "desched"), "lint", "policy.yaml"],
             expect=r"\bin 1 file\b"),
        Tool("yamllint", "yamllint FILE", [os.path.join(bins.peers, "yamllint"), "policy.yaml"]),
        Tool("kubernetes-validate", "kubernetes-validate FILE",
             [os.path.join(bins.peers, "kubernetes-validate"), "policy.yaml"], expect="DeschedulerPolicy"),
        Tool(FLOOR, FLOOR, [os.path.join(bins.desched, "python"), "-c", "pass"], codes=frozenset({0})),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "policy.yaml"), "w", encoding="utf-8") as handle:
            handle.write(POLICY.format(n=1, limit=5, low=20, high=50, restarts=100, lifetime=86400))
        for tool in tools:  # also the first warm-up: page cache and bytecode
            check(tool, tmp)
        alternate(tools, dict.fromkeys((tool.name for tool in tools), 1), tmp)  # second warm-up
        times = alternate(tools, dict.fromkeys((tool.name for tool in tools), runs), tmp)
    median_ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
    ratio = {peer: median_ms["desched"] / median_ms[peer] for peer in PEERS}
    _say(f"single file, whole process (pre-commit case): median of {runs} runs each, alternated")
    for tool in tools:
        note = f"desched/{tool.name} {ratio[tool.name]:.2f}" if tool.name in ratio else ""
        note = note or ("(floor: interpreter start-up)" if tool.name == FLOOR else "")
        _say(f"  {tool.label:<28} {median_ms[tool.name]:8.1f} ms   {note}".rstrip())
    return {"runs": runs, "median_ms": median_ms, "ratio": ratio}


def repository(bins: Bins, count: int, runs: int, checkov_runs: int) -> Repository:
    """The repository case, one core: medians in seconds, files per second, and each peer's time over desched's."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = sorted(os.path.relpath(path, tmp) for path in write_tree(tmp, count))
        tools = [
            Tool("desched", "desched lint DIR",
                 _pinned([os.path.join(bins.desched, "desched"), "lint", "--format", "json", "."]),
                 expect=rf'"files": {count}\b'),
            Tool("yamllint", "yamllint DIR", _pinned([os.path.join(bins.peers, "yamllint"), "."])),
            Tool("kubernetes-validate", "kubernetes-validate F1 F2 ...",
                 _pinned([os.path.join(bins.peers, "kubernetes-validate"), *paths]), expect="DeschedulerPolicy"),
            Tool("checkov", "checkov -f F1 -f F2 ...",
                 _pinned([os.path.join(bins.checkov, "checkov"), *CHECKOV_FLAGS,
                          *(argument for path in paths for argument in ("-f", path))]),
                 codes=frozenset({0}), expect=r"Passed checks: [1-9]\d*, Failed checks: \d+", env=CHECKOV_ENV),
            Tool("libyaml", "libyaml parse (CSafeLoader)",
                 _pinned([os.path.join(bins.desched, "python"), "-c", PARSE, *paths]), codes=frozenset({0}),
                 expect=rf"parsed {count} files"),
        ]  # fmt: skip
        for tool in tools:  # also the warm-up
            check(tool, tmp)
        rounds = {tool.name: (checkov_runs if tool.name == "checkov" else runs) for tool in tools}
        times = alternate(tools, rounds, tmp)
    seconds = {name: statistics.median(values) for name, values in times.items()}
    rate = {name: count / value for name, value in seconds.items()}
    speedup = {peer: seconds[peer] / seconds["desched"] for peer in REPOSITORY_PEERS}
    _say(f"repository case: {count:,} files, one process per tool, pinned to one core; medians, tools alternated")
    _say(f"  {'':<30} {'runs':>4} {'seconds':>9} {'files/s':>9}   peer time / desched time")
    for tool in tools:
        note = f"{speedup[tool.name]:.1f}x" if tool.name in speedup else ""
        note = f"desched {1 / speedup['libyaml']:.2f}x its time" if tool.name == "libyaml" else note
        row = f"  {tool.label:<30} {rounds[tool.name]:>4} {seconds[tool.name]:9.2f} {rate[tool.name]:9,.0f}   {note}"
        _say(row.rstrip())
    return {"files": count, "runs": rounds, "seconds": seconds, "files_per_second": rate, "speedup": speedup}


def gitops(bins: Bins, count: int, runs: int) -> GitOps:
    """The GitOps case, one core: ``count`` Flux HelmReleases, Argo CD Applications and kustomizations with
    helmCharts (one cluster each, sharing a folder of Deployments and PDBs), desched against yamllint."""
    with tempfile.TemporaryDirectory() as tmp:
        write_gitops_tree(tmp, count)
        files = sum(len([name for name in names if name.endswith(".yaml")]) for _, _, names in os.walk(tmp))
        tools = [
            Tool("desched", "desched lint DIR",
                 _pinned([os.path.join(bins.desched, "desched"), "lint", "--format", "json", "."]),
                 expect=rf'"files": {files}\b'),
            Tool("yamllint", "yamllint DIR", _pinned([os.path.join(bins.peers, "yamllint"), "."])),
        ]  # fmt: skip
        for tool in tools:
            check(tool, tmp)
        times = alternate(tools, dict.fromkeys((tool.name for tool in tools), runs), tmp)
    seconds = {name: statistics.median(values) for name, values in times.items()}
    rate = {name: files / value for name, value in seconds.items()}
    speedup = seconds["yamllint"] / seconds["desched"]
    _say(f"GitOps case: {count} HelmRelease, Application and kustomization files ({files} in all), one core")
    for tool in tools:
        note = f"{speedup:.1f}x" if tool.name == "yamllint" else ""
        _say(f"  {tool.label:<30} {runs:>4} {seconds[tool.name]:9.2f} {rate[tool.name]:9,.0f}   {note}".rstrip())
    return {"files": files, "runs": runs, "seconds": seconds, "files_per_second": rate, "speedup": speedup}


def _measured(command: list[str], cwd: str) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one run of ``command``, a whole process (its own rusage, by ``wait4``)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def hostile_files(bins: Bins, runs: int, peer_runs: int, size: int) -> Hostile:
    """Each hostile file: desched's median seconds and highest peak RSS, the findings it reports (by rule), and
    yamllint's median seconds on the issue's file, the two alternated."""
    files: list[HostileFile] = []
    _say(f"hostile files: desched lint FILE pinned to one core, median of {runs} runs; yamllint {peer_runs} run(s)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in HOSTILE.items():
            path = os.path.join(tmp, f"{name}.yaml")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(hostile(name, size))
            ours = Tool("desched", f"desched lint {name}.yaml",
                        _pinned([os.path.join(bins.desched, "desched"), "lint", "--format", "json", path]),
                        expect=r'"findings"')  # fmt: skip
            theirs = Tool("yamllint", f"yamllint {name}.yaml", _pinned([os.path.join(bins.peers, "yamllint"), path]))
            check(ours, tmp)
            report = json.loads(subprocess.run(ours.command, env=ENV, capture_output=True, text=True).stdout)
            found: dict[str, int] = {}
            for finding in report["findings"]:
                found[finding["rule"]] = found.get(finding["rule"], 0) + 1
            seconds, peaks, peer = [], [], []
            for index in range(runs):
                took, peak = _measured(ours.command, tmp)
                seconds.append(took)
                peaks.append(peak)
                if name == HOSTILE_PEER and index < peer_runs:
                    peer.append(_measured(theirs.command, tmp)[0])
            row: HostileFile = {
                "name": name, "text": text, "bytes": os.path.getsize(path), "seconds": statistics.median(seconds),
                "peak_mib": max(peaks), "findings": found,
                "yamllint_seconds": statistics.median(peer) if peer else None,
            }  # fmt: skip
            files.append(row)
            note = f"   yamllint {row['yamllint_seconds']:.1f} s" if peer else ""
            _say(f"  {name:<16} {row['bytes'] / 2**20:5.1f} MiB {row['seconds']:7.2f} s {row['peak_mib']:6.0f} MiB"
                 f"   {found}{note}")  # fmt: skip
    return {
        "runs": runs, "peer_runs": peer_runs, "limit_seconds": HOSTILE_SECONDS, "limit_mib": HOSTILE_MIB,
        "files": files,
    }  # fmt: skip


def targets(single: SingleFile, repo: Repository, wrapped: GitOps, worst: Hostile) -> dict[str, Target]:
    """Each target's text, with the measured value, and whether it was met."""
    ratio, rate, speedup = single["ratio"]["yamllint"], repo["files_per_second"]["desched"], repo["speedup"]
    slowest = max(worst["files"], key=lambda row: row["seconds"])
    largest = max(worst["files"], key=lambda row: row["peak_mib"])
    return {
        "hostile_seconds": {
            "text": f"hostile files: each linted within {HOSTILE_SECONDS:.0f} s on one core (slowest "
            f"{slowest['name']}: {slowest['seconds']:.2f} s)",
            "met": slowest["seconds"] <= HOSTILE_SECONDS,
        },
        "hostile_memory": {
            "text": f"hostile files: each linted within {HOSTILE_MIB:.0f} MiB (largest {largest['name']}: "
            f"{largest['peak_mib']:.0f} MiB)",
            "met": largest["peak_mib"] <= HOSTILE_MIB,
        },
        "gitops_vs_yamllint": {
            "text": f"GitOps wrappers: desched lint faster than yamllint ({wrapped['speedup']:.1f}x)",
            "met": wrapped["speedup"] > 1.0,
        },
        "single_file_vs_yamllint": {
            "text": f"single file: desched lint at most {SINGLE_FILE_RATIO} of yamllint's time (ratio {ratio:.2f}, "
            f"target <= {SINGLE_FILE_RATIO:.2f})",
            "met": ratio <= SINGLE_FILE_RATIO,
        },
        "repository_files_per_second": {
            "text": f"repository: desched lint >= 1,000 files/s on one core ({rate:,.0f} files/s)",
            "met": rate >= 1000,
        },
        "repository_vs_kubernetes_validate": {
            "text": f"repository: desched lint faster than kubernetes-validate ({speedup['kubernetes-validate']:.1f}x)",
            "met": speedup["kubernetes-validate"] > 1.0,
        },
        "repository_vs_checkov": {
            "text": f"repository: desched lint faster than checkov ({speedup['checkov']:.1f}x)",
            "met": speedup["checkov"] > 1.0,
        },
        "repository_vs_libyaml": {
            "text": f"repository: desched lint at most {PARSE_RATIO:.0f}x a bare libyaml parse of the same files, both "
            f"whole processes on one core ({1 / speedup['libyaml']:.2f}x, target <= {PARSE_RATIO:.2f}x)",
            "met": 1 / speedup["libyaml"] <= PARSE_RATIO,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, help="single-file runs per tool (default 21; --quick 5); the repository "
                        "case runs max(3, runs // 4) rounds")  # fmt: skip
    parser.add_argument("--files", type=int, help="files in the repository case (default 2000; --quick 400)")
    parser.add_argument("--checkov-runs", type=int, help="checkov's runs in the repository case (default 3; --quick 1)")
    parser.add_argument("--hostile-runs", type=int, help="desched's runs on each hostile file (default 5; --quick 1)")
    parser.add_argument("--hostile-peer-runs", type=int, help="yamllint's runs on the issue's file (default 1)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer runs and files")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH as JSON")
    args = parser.parse_args()
    runs = args.runs or (5 if args.quick else 21)
    count = args.files or (400 if args.quick else 2000)
    checkov_runs = args.checkov_runs or (1 if args.quick else 3)
    hostile_runs = args.hostile_runs or (1 if args.quick else 5)
    hostile_size = 2**20 if args.quick else MAX_FILE_BYTES - 64

    bins = Bins(desched_venv(), peers_venv(), checkov_venv())
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    tools = versions()
    _say(f"machine: {machine}")
    _say("versions: " + ", ".join(f"{name} {version}" for name, version in tools.items()))
    _say()
    try:
        single = single_file(bins, runs)
        _say()
        repo = repository(bins, count, max(3, runs // 4), checkov_runs)
        _say()
        wrapped = gitops(bins, 200, max(5, runs // 2))
        _say()
        worst = hostile_files(bins, hostile_runs, args.hostile_peer_runs or 1, hostile_size)
    except ToolError as error:
        print(f"\nbench/lint.py: {error}", file=sys.stderr, flush=True)
        return 2
    goals = targets(single, repo, wrapped, worst)
    _say("\ntargets")
    for goal in goals.values():
        _say(f"  {'met' if goal['met'] else 'MISSED':<6}  {goal['text']}")
    if args.json:
        results = {
            "machine": machine,
            "versions": tools,
            "single_file": single,
            "repository": repo,
            "gitops": wrapped,
            "hostile": worst,
            "targets": goals,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
            handle.write("\n")
        _say(f"\nwritten: {args.json}")
    return 0 if all(goal["met"] for goal in goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
