"""Every benchmark in one run, against the peers users would otherwise run; one table, and docs/performance.md.

``python bench/suite.py`` (on a fresh machine of this kind, nothing else first):

1. prepares the separate virtual environments (:mod:`peers`: desched installed from this checkout as users get it,
   yamllint and kubernetes-validate, checkov apart), adds matplotlib to desched's, installs Debian's ``wrk`` when it
   is missing, and runs itself again inside desched's environment;
2. runs ``bench/lint.py`` (single file and repository case against the peers), ``bench/migrate.py``,
   ``bench/workloads.py``, ``bench/simulate.py``, ``bench/webhook.py`` and ``bench/webhook_workloads.py`` (on the
   test control plane) and ``bench/values_sources.py``, each writing JSON;
3. prints one table and writes ``docs/performance.json`` (the figures), ``docs/performance.md`` (the table, the
   method, the targets) and ``docs/performance-simulate.png`` (simulate time and memory against cluster size).

``--quick`` runs every section small (a smoke run, not figures to publish); ``--only lint,webhook`` runs some
sections (the other sections' published figures stay in the docs, each with the date it was measured);
``--render`` rewrites the docs from ``docs/performance.json`` without measuring. Exit status: 0 when every
target is met, 1 when one is missed, 2 when a section could not run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(HERE))

import peers  # noqa: E402

SECTIONS: dict[str, tuple[list[str], list[str]]] = {  # name: (arguments, --quick arguments)
    "lint": ([], ["--quick"]),
    "migrate": ([], ["--files", "200", "--runs", "3"]),
    "workloads": ([], ["--workloads", "2000", "--pdbs", "400", "--repeat", "3"]),
    "simulate": ([], ["--sizes", "100,300", "--runs", "1"]),
    "webhook": ([], ["--seconds", "2", "--rounds", "1"]),
    "webhook_workloads": ([], ["--workloads", "1000", "--pdbs", "200", "--seconds", "2", "--rounds", "1"]),
    "values_sources": ([], ["--counts", "50,100,200", "--runs", "1"]),
}


def bootstrap() -> None:
    """Environments and tools; then this script again inside desched's virtual environment."""
    python = peers.desched_python()
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "matplotlib>=3.8"], check=True)
    if shutil.which("wrk") is None:
        if os.geteuid() != 0:
            raise SystemExit("bench/suite.py needs wrk (Debian's package): sudo apt-get install wrk")
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=False, stdout=subprocess.DEVNULL)
        if shutil.which("wrk") is None:
            subprocess.run(["apt-get", "update", "-q"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, stdout=subprocess.DEVNULL)
    os.execv(python, [python, str(Path(__file__).resolve()), *sys.argv[1:]])


def run_section(name: str, quick: bool, work: Path) -> dict[str, Any]:
    """One benchmark script, its output shown as it goes; its JSON, or ``{"error": ...}``."""
    arguments, quick_arguments = SECTIONS[name]
    output = work / f"{name}.json"
    print(f"\n=== {name} ===", flush=True)
    done = subprocess.run(
        [sys.executable, str(HERE / f"{name}.py"), *(quick_arguments if quick else arguments), "--json", str(output)],
        cwd=ROOT,
        check=False,
    )
    if done.returncode not in (0, 1) or not output.exists():
        return {"error": f"bench/{name}.py exited {done.returncode}"}
    result: dict[str, Any] = json.loads(output.read_text())
    return result


def rows(results: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Table rows: (benchmark, desched, peer or baseline, ratio, target)."""
    table: list[tuple[str, str, str, str, str]] = []

    def verdict(target: dict[str, Any] | None) -> str:
        return "" if target is None else ("met" if target["met"] else "**MISSED**")

    table += _baseline_rows(results.get("baseline", {}))
    lint = results.get("lint", {})
    if "single_file" in lint:
        single = lint["single_file"]
        ours = single["median_ms"]["desched"]
        for peer in ("yamllint", "kubernetes-validate"):
            target = lint["targets"].get(f"single_file_vs_{peer.replace('-', '_')}")
            table.append(
                (
                    "Lint, one policy file, whole process (pre-commit)",
                    f"{ours:.0f} ms",
                    f"{peer} {single['median_ms'][peer]:.0f} ms",
                    f"{single['ratio'][peer]:.2f}x the time",
                    verdict(target),
                )
            )
    if "repository" in lint:
        repo = lint["repository"]
        for peer in ("yamllint", "kubernetes-validate", "checkov"):
            if peer not in repo["seconds"]:
                continue
            target = lint["targets"].get(f"repository_vs_{peer.replace('-', '_')}")
            table.append(
                (
                    f"Lint, repository of {repo['files']:,} files, one core",
                    f"{repo['files_per_second']['desched']:,.0f} files/s",
                    f"{peer} {repo['files_per_second'][peer]:,.0f} files/s",
                    f"{repo['speedup'][peer]:.1f}x faster",
                    verdict(target),
                )
            )
        if "libyaml" in repo["seconds"]:
            table.append(
                (
                    f"Lint, repository of {repo['files']:,} files, one core, against parsing them",
                    f"{repo['seconds']['desched']:.2f} s",
                    f"libyaml CSafeLoader parse {repo['seconds']['libyaml']:.2f} s",
                    f"{1 / repo['speedup']['libyaml']:.2f}x the time",
                    verdict(lint["targets"].get("repository_vs_libyaml")),
                )
            )
    if "gitops" in lint:
        wrapped = lint["gitops"]
        table.append(
            (
                f"Lint, GitOps: 200 HelmRelease, Application, kustomization files ({wrapped['files']} in all)",
                f"{wrapped['files_per_second']['desched']:,.0f} files/s",
                f"yamllint {wrapped['files_per_second']['yamllint']:,.0f} files/s",
                f"{wrapped['speedup']:.1f}x faster",
                verdict(lint["targets"].get("gitops_vs_yamllint")),
            )
        )
    worst = lint.get("hostile", {})
    for row in worst.get("files", []):
        peer = row["yamllint_seconds"]
        fast, small = row["seconds"] <= worst["limit_seconds"], row["peak_mib"] <= worst["limit_mib"]
        table.append(
            (
                f"Lint, hostile file ({row['bytes'] / 2**20:.1f} MiB): {row['text']}, one core",
                f"{row['seconds']:.2f} s, peak RSS {row['peak_mib']:.0f} MiB",
                f"yamllint {peer:.1f} s" if peer else "",
                f"{row['seconds'] / peer:.3f}x the time" if peer else "",
                f"<= {worst['limit_seconds']:.0f} s: {verdict({'met': fast})}, "
                f"<= {worst['limit_mib']:.0f} MiB: {verdict({'met': small})}",
            )
        )
    migrate = results.get("migrate", {})
    for label, target in migrate.get("targets", {}).items():
        table.append(
            (
                f"Migration, {migrate['files']:,} v1alpha1 files (`{label}`)",
                f"{target['seconds']:.2f} s ({target['files_per_second']:,.0f} files/s)",
                "",
                "",
                f"{target['text'].split('target')[-1].strip()}: {verdict(target)}",
            )
        )
    table += _values_rows(results.get("values_sources", {}))
    workloads = results.get("workloads", {})
    if "seconds" in workloads:
        table.append(
            (
                f"Workload safety, {workloads['workloads']:,} workloads + {workloads['pdbs']:,} PDBs",
                f"{workloads['seconds']:.2f} s",
                "",
                "",
                f"< 3 s: {verdict(workloads['targets']['workloads'])}",
            )
        )
    simulate = results.get("simulate", {})
    for shape, label in (("", "packed"), ("pools-", "in pools")):
        table += _simulate_rows(simulate, shape, label, verdict)
    on = {row["nodes"]: row for row in simulate.get("rows", []) if row["policy"] == "nodefit-on"}
    rows = {(row["policy"], row["nodes"]): row for row in simulate.get("rows", [])}
    for (policy, nodes), row in rows.items():
        single, one_job = on.get(nodes), rows.get((f"{policy}-jobs-1", nodes))
        if not policy.startswith("samples-") or policy.endswith("-jobs-1") or single is None or one_job is None:
            continue
        samples = int(policy.split("-")[1])
        target = simulate["targets"][f"{policy} {nodes}"]
        table.append(
            (
                f"Executor simulate --samples {samples}, {nodes:,} nodes, nodeFit on (default --jobs; --jobs 1)",
                f"{row['seconds']:.2f} s; {one_job['seconds']:.2f} s",
                f"{samples} separate runs {samples * single['seconds']:.2f} s",
                f"{target['value']:.2f}; {one_job['seconds'] / (samples * single['seconds']):.2f} of the time",
                f"<= 0.5: {verdict(target)}",
            )
        )
    for key, label in (
        ("growth", "packed, nodeFit on"),
        ("growth nodeFit off", "packed, nodeFit off"),
        ("pools growth", "in pools, nodeFit on"),
        ("pools growth nodeFit off", "in pools, nodeFit off"),
    ):
        if key in simulate.get("targets", {}):
            growth = simulate["targets"][key]
            limit = f"<= 1.2: {verdict(growth)}" if "nodeFit off" not in key else ""
            table.append((f"Executor simulate, growth exponent, {label}", f"{growth['value']:.2f}", "", "", limit))
    webhook = results.get("webhook", {})
    for form in ("unique", "repeated"):
        key = f"saturated/webhook/{form}"
        if key not in webhook.get("medians", {}):
            continue
        ours, noop = webhook["medians"][key], webhook["medians"][f"saturated/no-op/{form}"]
        paced = webhook["medians"][f"paced/webhook/{form}"]
        ratio, p99 = webhook["targets"][f"throughput/{form}"], webhook["targets"][f"p99/{form}"]
        table.append(
            (
                f"Webhook, {webhook['connections']} TLS connections, {form} policy ConfigMaps, saturated",
                f"{ours['rps']:,.0f} req/s",
                f"no-op {noop['rps']:,.0f} req/s",
                f"{ratio['value']:.2f}",
                f">= 0.5: {verdict(ratio)}",
            )
        )
        offered = 1000 // webhook["pace_ms"] * webhook["connections"]
        table.append(
            (
                f"Webhook, {form} policy ConfigMaps, paced (~{offered} req/s offered)",
                f"p50 {paced['p50_ms']:.1f} ms, p99 {paced['p99_ms']:.1f} ms",
                "no-op p99 {:.1f} ms".format(webhook["medians"][f"paced/no-op/{form}"]["p99_ms"]),
                "",
                f"p99 <= 20 ms: {verdict(p99)}",
            )
        )
        table += _split_rows(f"Webhook, {form} policy ConfigMaps", webhook.get("cpu_split", {}).get(form))
    for row in ("flood", "flood_hog"):
        if row not in webhook:
            continue
        flood = webhook[row]
        hogs = f" under {flood['hogs']} CPU hogs" if flood.get("hogs") else ""
        name = row.replace("_", "-")
        table.append(
            (
                f"Webhook, {flood['requests']} concurrent distinct 1 MB policy ConfigMaps{hogs}",
                f"max {flood['max_s']:.2f} s, p99 {flood['p99_s']:.2f} s, "
                f"peak RSS {flood['peak_rss_bytes'] / 2**20:.0f} MiB",
                "",
                "",
                f"<= 5 s: {verdict(flood['targets'][f'{name}/max'])}, "
                f"<= {flood['memory_limit_bytes'] / 2**20:.0f} MiB: {verdict(flood['targets'][f'{name}/rss'])}",
            )
        )
    table += _workload_rows(results.get("webhook_workloads", {}), verdict)
    return table


def _baseline_rows(section: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The lint cases against an earlier revision (bench/baseline.py)."""
    labels = {
        "single_file": "Lint, one policy file, whole process, against {rev}",
        "repository": "Lint, repository of {files:,} files, one core, against {rev}",
        "gitops": "Lint, GitOps ({files} files with chart values), one core, against {rev}",
    }
    table = []
    for name, label in labels.items():
        case = section.get(name)
        if case is None:
            continue
        low, high = case["pair_range"]
        table.append(
            (
                label.format(rev=section["revision"], files=case.get("files", 0)),
                f"{case['seconds']['now'] * 1000:,.0f} ms",
                f"{section['revision']} {case['seconds']['baseline'] * 1000:,.0f} ms",
                f"{case['ratio']:.2f}x the time (pairs {low:.2f} to {high:.2f})",
                "",
            )
        )
    return table


def _workload_rows(section: dict[str, Any], verdict: Any) -> list[tuple[str, str, str, str, str]]:
    """The workload webhook's rows: throughput and CPU against the no-op, paced latency, one decision."""
    table = []
    for form, label in (("deployments", "Deployment"), ("pdbs", "PodDisruptionBudget")):
        if f"saturated/webhook/{form}" not in section.get("medians", {}):
            continue
        medians, targets = section["medians"], section["targets"]
        ours, noop = medians[f"saturated/webhook/{form}"], medians[f"saturated/no-op/{form}"]
        paced, idle = medians[f"paced/webhook/{form}"], medians[f"paced/no-op/{form}"]
        cost = section["decision_ms"][form]
        cached = f"{section['workloads']:,} workloads + {section['pdbs']:,} PDBs cached"
        offered = 1000 // section["pace_ms"] * section["connections"]
        table += [
            (
                f"Webhook, {label} CREATE/UPDATE, {cached}, {section['connections']} TLS connections, saturated",
                f"{ours['rps']:,.0f} req/s, CPU {ours['cpu_ms']:.2f} ms/request",
                f"no-op {noop['rps']:,.0f} req/s, CPU {noop['cpu_ms']:.2f} ms/request",
                f"{targets[f'throughput/{form}']['value']:.2f}",
                f">= 0.7: {verdict(targets[f'throughput/{form}'])}",
            ),
            (
                f"Webhook, {label} CREATE/UPDATE, {cached}, paced (~{offered} req/s offered)",
                f"p50 {paced['p50_ms']:.1f} ms, p99 {paced['p99_ms']:.1f} ms",
                f"no-op p99 {idle['p99_ms']:.1f} ms",
                "",
                f"p99 <= 5 ms: {verdict(targets[f'p99/{form}'])}",
            ),
            *_split_rows(f"Webhook, {label} CREATE/UPDATE", section.get("cpu_split", {}).get(form)),
            (
                f"Webhook, one {label} decision in process, {cached}",
                f"{cost['indexed_p50_ms']:.2f} ms (p99 {cost['indexed_p99_ms']:.2f})",
                f"every cached object linted {cost['reference_ms']:,.0f} ms",
                f"{cost['reference_ms'] / cost['indexed_p50_ms']:,.0f}x faster",
                "",
            ),
        ]
    return table


def _split_rows(label: str, split: dict[str, float] | None) -> list[tuple[str, str, str, str, str]]:
    """The row of a webhook CPU split (``bench/webhook.py``'s ``cpu_split``), none when the section has no split."""
    if split is None:
        return []
    stages = ("tls", "http", "read", "decode", "decide", "log", "encode")
    return [
        (
            f"{label}, CPU per request by stage (saturated)",
            ", ".join(f"{stage} {split[stage]:.3f}" for stage in stages) + f" = {split['total']:.3f} ms",
            f"no-op {split['no-op']:.3f} ms",
            f"+{split['total'] - split['no-op']:.3f} ms",
            "",
        )
    ]


def _limits(text: str) -> str:
    """``< 30, < 3`` from a target's text ``... 17.1 s (target < 30), 1.5 GB (target < 3)``."""
    return ", ".join(part.split(")", 1)[0] for part in text.split("(target ")[1:])


def _simulate_rows(
    simulate: dict[str, Any], shape: str, label: str, verdict: Any
) -> list[tuple[str, str, str, str, str]]:
    """The table rows of one shape's nodeFit-on runs, beside its nodeFit-off runs."""
    rows = simulate.get("rows", [])
    off = {row["nodes"]: row for row in rows if row["policy"] == f"{shape}nodefit-off"}
    table = []
    for row in rows:
        if row["policy"] != f"{shape}nodefit-on":
            continue
        baseline = off.get(row["nodes"])
        target = simulate["targets"].get(f"{shape.replace('-', ' ')}{row['nodes']} nodes")
        table.append(
            (
                f"Executor simulate, {row['nodes']:,} nodes / {row['pods']:,} pods {label}, all plugins, nodeFit on",
                f"{row['seconds']:.2f} s, {row['peak_bytes'] / 2**20:,.0f} MB"
                + (
                    f" ({row['peak_per_snapshot_byte']:.1f} MB per snapshot MB)"
                    if "peak_per_snapshot_byte" in row
                    else ""
                ),
                f"nodeFit off {baseline['seconds']:.2f} s" if baseline else "",
                f"{row['seconds'] / baseline['seconds']:.2f}x the time" if baseline else "",
                "" if target is None else f"{_limits(target['text'])}: {verdict(target)}",
            )
        )
        reference = simulate["targets"].get(f"{shape.replace('-', ' ')}{row['nodes']} nodes against json.load")
        load = next((r for r in rows if r["policy"] == f"{shape}json-load" and r["nodes"] == row["nodes"]), None)
        if reference is not None and load is not None:
            table.append(
                (
                    f"Executor simulate against json.load of its snapshot, {row['nodes']:,} nodes {label}, nodeFit on",
                    f"{reference['value']:.2f}x the time, {reference['memory']:.2f}x the peak",
                    f"json.load {load['seconds']:.2f} s, {load['peak_bytes'] / 2**20:,.0f} MB",
                    "",
                    f"{_limits(reference['text'])}: {verdict(reference)}",
                )
            )
    return table


def missed(results: dict[str, Any]) -> list[str]:
    """The text of every target missed, and of every section that could not run."""
    found = [f"{name}: {section['error']}" for name, section in results.items() if "error" in section]
    for name, section in results.items():
        found += [f"{name}: {target['text']}" for target in section.get("targets", {}).values() if not target["met"]]
    return found


def plot(results: dict[str, Any], path: Path) -> bool:
    """Simulate time and peak memory against cluster size, as PNG; False when there is nothing to plot."""
    rows = results.get("simulate", {}).get("rows", [])
    names = ("nodefit-on", "nodefit-off", "pools-nodefit-on", "pools-nodefit-off")
    series = {name: [row for row in rows if row["policy"] == name] for name in names}
    if not series["nodefit-on"]:
        return False
    import matplotlib  # type: ignore[import-not-found,unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]

    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=110)
    for name, data in series.items():
        nodes = [row["nodes"] for row in data]
        label = ("in pools, " if name.startswith("pools-") else "packed, ") + "nodeFit " + name.rsplit("-", 1)[1]
        left.plot(nodes, [row["seconds"] for row in data], marker="o", label=label)
        right.plot(nodes, [row["peak_bytes"] / 2**20 for row in data], marker="o", label=label)
    left.set(xlabel="nodes (30 pods each)", ylabel="seconds, whole process", title="desched simulate: time")
    right.set(xlabel="nodes (30 pods each)", ylabel="peak RSS, MB", title="desched simulate: memory")
    left.legend()
    for axes in (left, right):
        axes.grid(True, alpha=0.3)
        axes.set_ylim(bottom=0)
        axes.set_xlim(left=0)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True


def markdown(results: dict[str, Any], table: list[tuple[str, str, str, str, str]], plotted: bool) -> str:
    meta = results["_run"]
    lines = [
        "# Performance",
        "",
        f"Generated by `python bench/suite.py` on {meta['date']}{' (--quick: a smoke run)' if meta['quick'] else ''}"
        " from `docs/performance.json`; do not edit by hand.",
        "",
        "Sections measured on: " + ", ".join(f"{name} {date}" for name, date in meta.get("measured", {}).items()) + ".",
        "",
        f"Machine: {meta['machine']}. Tools: "
        + ", ".join(f"{tool} {version}" for tool, version in sorted(meta.get("versions", {}).items()))
        + ".",
        "",
        "| Benchmark | desched | Peer or baseline | Ratio | Target |",
        "|---|---|---|---|---|",
        *[f"| {' | '.join(row)} |" for row in table],
        "",
    ]
    gaps = missed(results)
    if gaps:
        lines += ["## Targets missed", "", *[f"- {gap}" for gap in gaps], ""]
    if plotted:
        lines += [
            "## Executor simulate against cluster size",
            "",
            "![simulate time and peak memory against nodes](performance-simulate.png)",
            "",
        ]
    lines += [
        "## Method",
        "",
        "- Every figure is a median over several runs. Where desched has a peer or a baseline, the two are run in "
        "alternation (A B A B), so that drift on the machine cancels, and the ratio is taken between medians.",
        "- Lint: whole processes, as pre-commit and CI run them, from separate virtual environments (desched installed "
        "from this checkout, not editable; yamllint and kubernetes-validate; checkov with `--framework kubernetes` and "
        "one `-f` per file). The repository case is pinned to one core; its reference is a bare libyaml parse of the "
        "same files (`yaml.load_all(text, Loader=yaml.CSafeLoader)` of each, consumed), a whole process of desched's "
        "interpreter. Hostile files (`bench/corpus.py`, the worst "
        "shapes found for the lint limits of README.md, Limits): `desched lint --format json FILE` pinned to one core, "
        "median time and highest peak RSS (the process's own, from `wait4`); yamllint on the issue's file only, once "
        "(it takes minutes).",
        "- Values sources (`bench/values_sources.py`): one install of the chart with 50 to 800 values sources "
        "(a kustomize `helmCharts` entry's `additionalValuesFiles`; a HelmRelease's `valuesFrom` ConfigMaps), "
        "`lint_paths` in process (start-up excluded), median of 3; the time a source at the most sources over the "
        "time a source at the fewest is about 1 when the cost is linear.",
        "- Against an earlier revision (`bench/baseline.py --rev REV`): this checkout and the revision, each "
        "installed without dependencies beside the other and run as `python -m desched` from one interpreter, "
        "alternated; the ratio is this checkout's median over the revision's, with the range of the run-by-run "
        "ratios (how noisy the machine was).",
        "- Migration, workload safety and simulate: whole processes (workload safety in process), one core where "
        "stated; simulate runs every plugin (HighNodeUtilization separately, as the linter forbids it beside "
        "LowNodeUtilization), with DefaultEvictor's `nodeFit` on and off, on a packed generated cluster where one "
        "application in twenty runs node-sized pods (the hard case for `nodeFit`), PodDisruptionBudgets applied, "
        "and from 1,000 nodes on a cluster in node pools (`bench/clusters.py` `pools=True`: pool labels, tainted gpu "
        "and batch pools, a maintenance taint on every 17th node, applications pinned by nodeSelector or required "
        "affinity with their tolerations). "
        "`--samples 20` (nodeFit on) is one process over 20 listing orders, with the default `--jobs` (the usable "
        "CPUs) and with `--jobs 1`, against 20 times the median single run of the same size.",
        "- Webhook: `wrk` on the same machine, 50 keep-alive TLS connections, against `desched webhook` and a no-op "
        "`/validate` on the same stack (uvicorn, TLS 1.2+). *Unique* objects differ in a policy value in every "
        "request (a counter as `maxNoOfPodsToEvictPerNode`), so every decision is computed; *repeated* objects are "
        "the same ConfigMap again, as GitOps controllers send it, and are answered by the decision cache. "
        "*Saturated* is a closed loop (throughput); *paced* gives each connection random think times (latency at a "
        "load below saturation). CPU per request by stage: *tls* is what the no-op spends over TLS beyond the same "
        "no-op over plain HTTP; *read*, *decode*, *decide*, *log* and *encode* the event loop's CPU time in each "
        "stage of `/validate` (`desched webhook --stage-times`); *http* the rest of the webhook's CPU time (HTTP "
        "framing, the event loop, the server's protocol code).",
        "- Workload webhook: the test control plane (Kubernetes 1.20, `tests/kcp`) holding the workloads and PDBs, "
        "`desched webhook --policy-configmap` once its cache has synced, against the same no-op server, `wrk` as "
        "above with AdmissionReviews built from the API server's own objects (Deployment or PDB, CREATE and UPDATE, "
        "200 cycled). CPU is each server process's time per request. The decision alone is timed in process, with "
        "the index and with every cached object linted (how it was decided before the index).",
        "",
        "Reproduce: `python bench/suite.py` (about 20 minutes; `--quick` for a smoke run). Each section also runs "
        "alone: `python bench/<section>.py`.",
        "",
    ]
    return "\n".join(lines)


def _values_rows(values: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """One row a shape of bench/values_sources.py: lint time at the most values sources, and the time per source
    there over the time per source at the fewest (about 1: linear)."""
    table = []
    for shape in dict.fromkeys(row["shape"] for row in values.get("rows", [])):
        measured = [row for row in values["rows"] if row["shape"] == shape]
        fewest, most = measured[0], measured[-1]
        table.append(
            (
                f"Lint, one install with {fewest['sources']:,} to {most['sources']:,} values sources ({shape})",
                f"{most['seconds']:.2f} s ({most['per_source'] * 1000:.2f} ms a source)",
                f"{fewest['sources']:,} sources: {fewest['per_source'] * 1000:.2f} ms a source",
                f"{most['per_source'] / fewest['per_source']:.2f}x the time a source",
                "linear: about 1x",
            )
        )
    return table


def render(results: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Write the docs from ``results``; returns the table."""
    table = rows(results)
    plotted = plot(results, DOCS / "performance-simulate.png")
    (DOCS / "performance.md").write_text(markdown(results, table, plotted))
    return table


def _earlier(sections: list[str], quick: bool) -> dict[str, Any]:
    """The published figures of the sections not run now (``--only``), kept in the docs beside the new ones; none
    for a full run or a smoke run, or when the published figures are from a smoke run."""
    published = DOCS / "performance.json"
    if quick or set(sections) == set(SECTIONS) or not published.is_file():
        return {}
    earlier: dict[str, Any] = json.loads(published.read_text())
    if earlier.get("_run", {}).get("quick"):
        return {}
    return {name: figures for name, figures in earlier.items() if name not in sections}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every section small: a smoke run")
    parser.add_argument("--only", help=f"comma-separated sections (default: all of {', '.join(SECTIONS)})")
    parser.add_argument("--render", action="store_true", help="rewrite the docs from docs/performance.json")
    args = parser.parse_args()
    if Path(sys.prefix).resolve() != Path(peers.VENV).resolve():
        bootstrap()  # also for --render: matplotlib lives in desched's benchmark environment
    if args.render:
        results = json.loads((DOCS / "performance.json").read_text())
    else:
        sections = args.only.split(",") if args.only else list(SECTIONS)
        unknown = set(sections) - set(SECTIONS)
        if unknown:
            parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
        results = _earlier(sections, args.quick)
        today = datetime.date.today().isoformat()
        with tempfile.TemporaryDirectory() as work:
            for name in sections:
                results[name] = run_section(name, args.quick, Path(work))
        measured = {**results.get("_run", {}).get("measured", {}), **dict.fromkeys(sections, today)}
        results["_run"] = {
            "date": today,
            "quick": args.quick,
            "measured": measured,
            "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            # the tools of the sections kept from an earlier run stay named (their figures came from them)
            "versions": {**results.get("_run", {}).get("versions", {}), **peers.versions()},
        }
        (DOCS / "performance.json").write_text(json.dumps(results, indent=2) + "\n")
    table = render(results)
    width = max(len(row[0]) for row in table) if table else 10
    print()
    for row in table:
        print(f"{row[0]:<{width}}  {row[1]:>24}  {row[2]:>30}  {row[3]:>16}  {row[4]}")
    gaps = missed(results)
    print("\nall targets met" if not gaps else "\nmissed:\n  " + "\n  ".join(gaps))
    print(f"written: {DOCS / 'performance.md'}")
    if any("error" in section for section in results.values()):
        return 2
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
