"""What ``desched simulate`` and ``desched run`` print of a cycle: the JSON document (the contract in
:mod:`desched.executor.command`'s docstring) and the readable table made from it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desched.executor.cluster import Json

__all__ = ["render_text", "report"]


def report(result: Any, evictions: list[Any], explain: bool) -> Json:
    """The JSON output contract (module docstring)."""
    from desched.executor.evictions import summary

    document: Json = {
        "evictions": [eviction._asdict() for eviction in evictions],
        "summary": {**summary(evictions), "skippedCycle": result.skipped},
        "pluginErrors": [error._asdict() for error in result.errors],
    }
    if explain:
        document["pods"] = [
            {"namespace": v.namespace, "pod": v.pod, "node": v.node, "evictable": v.evictable, "reason": v.reason}
            for v in result.verdicts
        ]
    return document


def render_text(document: Json, errors: Sequence[object], failures: list[Any]) -> str:
    """A readable table of the evictions, the failures and the summary."""
    rows = [("NAMESPACE", "POD", "NODE", "PROFILE", "PLUGIN")] + [
        (e["namespace"], e["pod"], e["node"], e["profile"], e["plugin"]) for e in document["evictions"]
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    summary = document["summary"]
    if summary["skippedCycle"]:
        lines = ["cycle skipped: fewer than 2 ready nodes match the policy's nodeSelector"]
    for failure in failures:
        lines.append(
            f"failed: {failure.namespace}/{failure.pod} ({failure.profile}/{failure.plugin}): {failure.message}"
        )
    for error in errors:
        lines.append(f"plugin error: {error}")
    by_plugin = ", ".join(f"{name} {count}" for name, count in summary["byPlugin"].items())
    lines.append(
        f"{summary['evicted']} pod{'s' if summary['evicted'] != 1 else ''} evicted"
        + (f" ({by_plugin})" if by_plugin else "")
    )
    for pod in document.get("pods", []):
        verdict = "evictable" if pod["evictable"] else f"protected: {pod['reason']}"
        lines.append(f"  {pod['namespace']}/{pod['pod']} on {pod['node'] or '-'}: {verdict}")
    if "forecast" in document:
        lines.extend(_forecast_lines(document["forecast"], summary))
    if "budgetRefresh" in document:
        lines.extend(_refresh_lines(document["budgetRefresh"], document["forecast"]))
    return "\n".join(lines) + "\n"


def _forecast_lines(forecast: Json, summary: Json) -> list[str]:
    """The ``--samples`` table: per plugin and in total, this run's count beside the min, median and max, how sure
    the forecast is, then the pods that only some listing orders evict."""
    title = f"over {forecast['samples']} listing orders (seed {forecast['seed']})"
    rows = [(title, "this run", "min", "median", "max")]
    for name, spread in [("all plugins", forecast["evicted"]), *forecast["byPlugin"].items()]:
        single = summary["evicted"] if name == "all plugins" else summary["byPlugin"].get(name, 0)
        rows.append((f"  {name}", str(single), str(spread["min"]), str(spread["median"]), str(spread["max"])))
    width = max(len(row[0]) for row in rows)
    lines = [row[0].ljust(width) + "".join(cell.rjust(9) for cell in row[1:]) for row in rows]
    lines.append(forecast["assurance"]["statement"])
    samples = forecast["samples"]
    sometimes = [pod for pod in forecast["pods"] if pod["evictedIn"] < samples]
    if sometimes:
        lines.append(f"evicted in some listing orders only ({len(sometimes)} pods):")
        lines += [
            f"  {pod['namespace']}/{pod['pod']} on {pod['node'] or '-'}: {pod['evictedIn']} of {samples}"
            for pod in sometimes
        ]
    elif forecast["pods"]:
        lines.append(f"every pod above is evicted in all {samples} listing orders")
    return lines


def _refresh_lines(refresh: Json, forecast: Json) -> list[str]:
    """The ``budgetRefresh`` table: per plugin and in total, the min and max with budgets refreshed from never to
    after every eviction, beside the listing orders' range alone, and whether the refreshes change it."""
    title = f"with budgets refreshed {refresh['refreshes']}"
    rows = [(title, "min", "max", "orders alone")]
    changed = False
    for name, bounds in [("all plugins", refresh["evicted"]), *refresh["byPlugin"].items()]:
        alone = forecast["evicted"] if name == "all plugins" else forecast["byPlugin"].get(name, {"min": 0, "max": 0})
        changed = changed or (bounds["min"], bounds["max"]) != (alone["min"], alone["max"])
        rows.append((f"  {name}", str(bounds["min"]), str(bounds["max"]), f"{alone['min']}-{alone['max']}"))
    width = max(len(row[0]) for row in rows)
    lines = [
        row[0].ljust(width) + "".join(cell.rjust(w) for cell, w in zip(row[1:], (9, 9, 14), strict=True))
        for row in rows
    ]
    verdict = "widen" if changed else "do not change"
    lines.append(f"budget refreshes by the disruption controller during the cycle {verdict} the listing orders' range")
    return lines
