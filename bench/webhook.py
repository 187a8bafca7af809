"""Admission webhook latency and throughput (issue 8): 50 concurrent TLS connections on loopback, driven by wrk.

Servers, started side by side on the same stack (:func:`desched.webhook.server.run`: uvicorn, TLS 1.2+):
* ``desched webhook`` (enforce mode, no cluster cache);
* the baseline, a no-op ``/validate`` that only parses the AdmissionReview and echoes its uid.

Load: ``wrk`` (C, from Debian's ``wrk`` package; ``apt-get install wrk``) over 50 keep-alive HTTPS connections, one
thread, posting an AdmissionReview for a typical policy ConfigMap (``deploy/executor/base/policy.yaml``) in two forms:
* ``unique``: every request carries a different policy (a counter as its ``maxNoOfPodsToEvictPerNode``), so every
  decision is computed and no cache of any kind could answer it;
* ``repeated``: the same object each time, as GitOps controllers send it (Flux's server-side dry-run drift checks,
  a dry run before each apply); the webhook's decision cache answers these.

Two measurements per form, alternated with the no-op in every round (A B A B) so that drift cancels:
* ``saturated``: a closed loop, each connection sends its next request when the answer arrives; gives throughput.
  (By Little's law, latency there is 50 / throughput, whatever the server.)
* ``paced``: each connection waits a random think time (exponential, mean ``--pace-ms``, default 100 ms) before
  its next request: about 500 requests/s offered by independent clients, more policy objects than a cluster admits;
  gives the latency a ``kubectl apply`` sees.

Targets: webhook throughput at least 50% of the no-op's (saturated) and p99 at most 20 ms (paced), for each form.

CPU split (saturated): each server's CPU time per request, and where the webhook's goes: ``tls``, what the no-op
spends over TLS beyond the same no-op over plain HTTP (measured in the same rounds; the bodies are the same, the
answers of about the same size); the stages the webhook times itself (``desched webhook --stage-times``: ``read``,
``decode``, ``decide``, ``log``, ``encode``, the event loop's CPU clock); ``http``, the rest: HTTP framing, the event
loop, the server's protocol code.

Flood (issue 18): ``--flood`` (default 32) distinct policy ConfigMaps of 1 MB each (8 data keys of 128 KiB, within the
webhook's policy limits) posted at once, one TLS connection each, to a fresh ``desched webhook``: the slowest answer and
the p99 against the webhook's ``timeoutSeconds`` (5 s), and the peak RSS of the server's process tree (workers
included) against the Deployment's memory limit (``deploy/webhook/base/deployment.yaml``). Answers may deny (busy or
over budget: the policy webhook fails closed); none may be late.
Run ``python bench/webhook.py``; ``--json PATH`` also writes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from desched.webhook.app import STAGES  # noqa: E402
from tests.webhook.server import Running, policy_review, serve, start  # noqa: E402

NOOP = """
import json, sys
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from desched.runtime.prometheus import Counter
from desched.webhook.server import Certificate, run
app, ops = FastAPI(), FastAPI()
@app.post("/validate")
async def validate(request: Request):
    review = json.loads(await request.body())
    return JSONResponse({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                         "response": {"uid": review["request"]["uid"], "allowed": True}})
@ops.get("/readyz")
async def ready():
    return "ok"
port, metrics, cert, key, scheme = sys.argv[1:]
failures = Counter("noop_certificate_reload_failures_total", "", ())
certificate = Certificate(cert, key, failures)
if scheme == "http":
    certificate.context = None  # the same server over plain HTTP
sys.exit(run(app, ops, "127.0.0.1", int(port), int(metrics), certificate))
"""

MARK = "maxNoOfPodsToEvictPerNode: 5"  # the unique form writes the request counter in place of the 5
TARGET_RATIO, TARGET_P99_MS = 0.5, 20.0
TIMEOUT_SECONDS = 5.0  # the policy webhooks' timeoutSeconds (deploy/webhook/base/webhook.yaml)
UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}

# wrk prints one JSON line when the run is over: requests, duration, errors and latency percentiles (microseconds).
REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %d, "duration_us": %d, "errors": %d, "p50_us": %d, "p99_us": %d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def review_body() -> str:
    policy = Path(ROOT, "deploy", "executor", "base", "policy.yaml").read_text()
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "bench",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "operation": "CREATE",
                "object": {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": "descheduler",
                        "namespace": "kube-system",
                        "labels": {"desched.io/policy": "true"},
                    },
                    "data": {"policy.yaml": policy},
                },
            },
        }
    )


def _long_string(text: str) -> str:
    """``text`` as a Lua long-bracket literal (taken verbatim)."""
    level = 1
    while f"]{'=' * level}]" in text:
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def wrk_script(form: str, pace_ms: int | None) -> str:
    """The wrk Lua script posting ``form`` (``unique`` or ``repeated``) bodies, paced or not."""
    body = review_body()
    if form == "repeated":
        return lua_post([f"wrk.body = {_long_string(body)}"], pace_ms)
    cut = body.index(MARK) + len(MARK) - 1
    return lua_post(
        [
            f"local head = {_long_string(body[:cut])}",
            f"local tail = {_long_string(body[cut + 1 :])}",
            "local n = 0",
            "request = function()",
            "  n = n + 1",
            "  return wrk.format(nil, nil, nil, head .. n .. tail)",
            "end",
        ],
        pace_ms,
    )


def lua_post(bodies: list[str], pace_ms: int | None) -> str:
    """A wrk Lua script that POSTs JSON, its bodies chosen by the Lua lines ``bodies``, paced or not, ending with
    the report line the benchmarks read."""
    lines = ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"', *bodies]
    if pace_ms is not None:
        # exponential think times (mean pace_ms): arrivals as from independent clients, never in lock-step bursts
        lines += [
            "math.randomseed(os.time())",
            f"delay = function() return math.floor(-{pace_ms} * math.log(1 - math.random())) end",
        ]
    return "\n".join(lines) + "\n" + REPORT


def run_wrk(port: int, script: Path, connections: int, seconds: float, scheme: str = "https") -> dict[str, float]:
    """One wrk run: requests/s, p50 and p99 in ms; a failed request fails the benchmark."""
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds:g}s",
        "-s",
        str(script),
        f"{scheme}://127.0.0.1:{port}/validate",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"requests"')]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    figures = json.loads(lines[-1])
    if figures["errors"]:
        raise SystemExit(f"{figures['errors']} failed requests: {done.stdout}")
    return {
        "rps": figures["requests"] / (figures["duration_us"] / 1e6),
        "p50_ms": figures["p50_us"] / 1000,
        "p99_ms": figures["p99_us"] / 1000,
    }


def start_noop(directory: Path, scheme: str = "https") -> Running:
    """The no-op server, over TLS or (``scheme`` http) plain HTTP."""
    return serve(
        directory,
        f"the no-op server ({scheme})",
        lambda port, metrics: [
            sys.executable,
            "-c",
            NOOP,
            str(port),
            str(metrics),
            str(directory / "tls.crt"),
            str(directory / "tls.key"),
            scheme,
        ],
    )


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user and system)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stage_seconds(server: Running) -> dict[str, float]:
    """The CPU seconds by stage a ``desched webhook --stage-times`` has counted (none for another server)."""
    series = 'desched_webhook_stage_cpu_seconds_total{stage="'
    lines = server.metrics().splitlines()
    return {line[len(series) :].split('"')[0]: float(line.split()[-1]) for line in lines if line.startswith(series)}


def timed_wrk(
    server: Running, script: Path, connections: int, seconds: float, scheme: str = "https", stages: bool = False
) -> dict[str, float]:
    """:func:`run_wrk` on ``server``, with its CPU ms per request (``cpu_ms``) and, ``stages``, that of each of its
    stages (``<stage>_ms``, :func:`stage_seconds`)."""
    before = stage_seconds(server) if stages else {}
    used = cpu_seconds(server.process.pid)
    figures = run_wrk(server.port, script, connections, seconds, scheme)
    used = cpu_seconds(server.process.pid) - used
    requests = figures["rps"] * seconds
    figures["cpu_ms"] = 1000 * used / requests
    after = stage_seconds(server) if stages else {}
    figures.update({f"{stage}_ms": 1000 * (after[stage] - before.get(stage, 0)) / requests for stage in after})
    return figures


def cpu_split(webhook: dict[str, float], noop: dict[str, float], plain: dict[str, float]) -> dict[str, float]:
    """Where the webhook's CPU ms per request go (see the module docstring), from the saturated medians of the
    webhook, the no-op and the no-op over plain HTTP; ``total`` and the no-op's beside them."""
    stages = {stage: webhook[f"{stage}_ms"] for stage in STAGES}
    tls = noop["cpu_ms"] - plain["cpu_ms"]
    rest = webhook["cpu_ms"] - tls - sum(stages.values())
    return {"tls": tls, "http": rest, **stages, "total": webhook["cpu_ms"], "no-op": noop["cpu_ms"]}


def split_text(split: dict[str, float]) -> str:
    """``TLS 0.12 + HTTP 0.20 + ... = 0.87 ms (no-op 0.33)``: a :func:`cpu_split` in one line."""
    parts = " + ".join(f"{name} {split[name]:.3f}" for name in ("tls", "http", *STAGES))
    return f"{parts} = {split['total']:.3f} ms a request (no-op {split['no-op']:.3f})"


def measure(connections: int, seconds: float, rounds: int, pace_ms: int) -> dict[str, Any]:
    """Medians per (mode, endpoint, form) over ``rounds`` alternated rounds."""
    runs: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        scripts = {}
        for form in ("unique", "repeated"):
            for mode, pace in (("saturated", None), ("paced", pace_ms)):
                scripts[mode, form] = Path(work, f"{mode}-{form}.lua")
                scripts[mode, form].write_text(wrk_script(form, pace))
        webhook = start(Path(work, "webhook"), "--stage-times")
        noop, plain = start_noop(Path(work, "noop")), start_noop(Path(work, "plain"), "http")
        servers = {"webhook": (webhook, "https"), "no-op": (noop, "https"), "no-op-http": (plain, "http")}
        try:
            for _ in range(rounds):
                for mode in ("saturated", "paced"):
                    for form in ("unique", "repeated"):
                        for name, (server, scheme) in servers.items():
                            if mode == "paced" and name == "no-op-http":
                                continue  # only for the CPU split
                            figures = timed_wrk(
                                server, scripts[mode, form], connections, seconds, scheme, stages=name == "webhook"
                            )
                            runs.setdefault((mode, name, form), []).append(figures)
            cache_hits = next(
                (
                    line.split()[-1]
                    for line in webhook.metrics().splitlines()
                    if line.startswith("desched_webhook_decision_cache_hits_total")
                ),
                "0",
            )
        finally:
            for server, _ in servers.values():
                server.stop()
    medians = {
        f"{mode}/{name}/{form}": {key: statistics.median(run[key] for run in found) for key in found[0]}
        for (mode, name, form), found in runs.items()
    }
    targets, splits = {}, {}
    for form in ("unique", "repeated"):
        splits[form] = cpu_split(*(medians[f"saturated/{name}/{form}"] for name in ("webhook", "no-op", "no-op-http")))
        ratio = medians[f"saturated/webhook/{form}"]["rps"] / medians[f"saturated/no-op/{form}"]["rps"]
        p99 = medians[f"paced/webhook/{form}"]["p99_ms"]
        targets[f"throughput/{form}"] = {
            "value": ratio,
            "text": f"webhook/no-op throughput, {form} objects: {ratio:.2f} (target >= {TARGET_RATIO})",
            "met": ratio >= TARGET_RATIO,
        }
        targets[f"p99/{form}"] = {
            "value": p99,
            "text": f"webhook p99 paced, {form} objects: {p99:.1f} ms (target <= {TARGET_P99_MS:g})",
            "met": p99 <= TARGET_P99_MS,
        }
    return {
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "connections": connections,
        "seconds": seconds,
        "rounds": rounds,
        "pace_ms": pace_ms,
        "medians": medians,
        "cpu_split": splits,
        "cache_hits": int(float(cache_hits)),
        "targets": targets,
    }


def memory_limit() -> int:
    """The webhook Deployment's memory limit in bytes."""
    text = Path(ROOT, "deploy", "webhook", "base", "deployment.yaml").read_text()
    found = re.search(r"limits: \{memory: (\d+)(Ki|Mi|Gi)\}", text)
    if found is None:
        raise SystemExit("no memory limit in deploy/webhook/base/deployment.yaml")
    return int(found.group(1)) * UNITS[found.group(2)]


@contextlib.contextmanager
def cpu_hog(processes: int) -> Iterator[None]:
    """``processes`` busy loops (plain Python, no nice) running while the block runs: another tenant keeping the
    machine's cores busy."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def flood(count: int, hog: int = 0) -> dict[str, Any]:
    """``count`` distinct 1 MB policy ConfigMaps at once against a fresh webhook (see the module docstring), while
    ``hog`` busy processes compete for the cores."""
    bodies = [policy_review(seed, 2**20, keys=8) for seed in range(count)]
    with tempfile.TemporaryDirectory() as work:
        webhook = start(Path(work, "flood"))
        try:
            with cpu_hog(hog):
                answers, peak = webhook.flood(bodies)
        finally:
            webhook.stop()
    times = sorted(seconds for seconds, _ in answers)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    limit = memory_limit()
    outcomes: dict[str, int] = {}
    for _, answer in answers:
        message = answer.get("status", {}).get("message", "")
        outcome = "allowed" if answer["allowed"] else message.removeprefix("desched: ").split(":")[0]
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    name = f"flood{'-hog' if hog else ''}"
    under = f" under {hog} CPU hogs" if hog else ""
    return {
        "requests": count,
        "hogs": hog,
        "max_s": times[-1],
        "p99_s": p99,
        "peak_rss_bytes": peak,
        "memory_limit_bytes": limit,
        "outcomes": outcomes,
        "targets": {
            f"{name}/max": {
                "value": times[-1],
                "text": f"flood of {count} 1 MB policies{under}, slowest answer: {times[-1]:.2f} s, p99 {p99:.2f} s "
                f"(target <= {TIMEOUT_SECONDS:g})",
                "met": times[-1] <= TIMEOUT_SECONDS,
            },
            f"{name}/rss": {
                "value": peak,
                "text": f"flood of {count} 1 MB policies{under}, peak RSS: {peak / 2**20:.0f} MiB "
                f"(target <= {limit / 2**20:.0f})",
                "met": peak <= limit,
            },
        },
    }


def conclude(result: dict[str, Any], json_path: str | None) -> int:
    """Print each target of ``result`` met or MISSED, write ``result`` to ``json_path`` when given; the exit code:
    0 when every target is met, else 1."""
    for target in result["targets"].values():
        print(f"{target['text']}: {'met' if target['met'] else 'MISSED'}")
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if all(target["met"] for target in result["targets"].values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0, help="per run (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds; medians are reported (default 3)")
    parser.add_argument("--pace-ms", type=int, default=100, help="paced mode: ms between requests per connection")
    parser.add_argument("--flood", type=int, default=32, help="concurrent 1 MB policies in the flood (default 32)")
    parser.add_argument("--hogs", type=int, default=2, help="busy processes during the second flood (default 2)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print(
            "bench/webhook.py needs wrk: apt-get install wrk (or run bench/suite.py, which installs it)",
            file=sys.stderr,
        )
        return 2
    result = measure(args.connections, args.seconds, args.rounds, args.pace_ms)
    result["flood"] = flood(args.flood)
    result["flood_hog"] = flood(args.flood, hog=args.hogs)
    for row in ("flood", "flood_hog"):
        result["targets"].update(result[row]["targets"])
    print(
        f"machine: {result['machine']}; wrk -t1 -c{args.connections}, load generator on the same machine; "
        f"medians of {args.rounds} alternated rounds of {args.seconds:g} s"
    )
    print(f"{'mode':<10} {'endpoint':<10} {'objects':<9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms':>8}")
    for key, figures in result["medians"].items():
        mode, name, form = key.split("/")
        print(
            f"{mode:<10} {name:<10} {form:<9} {figures['rps']:>8.0f} {figures['p50_ms']:>8.1f} "
            f"{figures['p99_ms']:>8.1f} {figures['cpu_ms']:>8.3f}"
        )
    for form, split in result["cpu_split"].items():
        print(f"webhook CPU split, {form} objects: {split_text(split)}")
    print(
        f"flood outcomes: {result['flood']['outcomes']}; under {args.hogs} CPU hogs: {result['flood_hog']['outcomes']}"
    )
    return conclude(result, args.json)


if __name__ == "__main__":
    sys.exit(main())
