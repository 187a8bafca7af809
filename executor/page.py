"""``desched simulate --html FILE``: the forecast as one self-contained HTML page.

Contract: :func:`utilization` reads the cluster (before it is released) and returns one :class:`Panel` per
LowNodeUtilization or HighNodeUtilization plugin the policy enables, in policy order, or, with neither, one panel of
plain request usage: each of the cycle's nodes (ready, matching the ``nodeSelector``) with its usage before the cycle
and after it, as the plugin's own ``split`` computes them (:class:`~desched.executor.plugins._nodeutilization.Split`:
requests of the non-terminal pods over allocatable, the same thresholds, offsets from the average with
``useDeviationThresholds``), "after" being the cluster without the pods the cycle evicted. :func:`render` writes the
page from those panels, the JSON document of ``simulate`` (evictions, failures, plugin errors, the ``--samples``
forecast and its ``budgetRefresh`` range) and the cycle's verdicts (why each pod was or was not evictable, as
``--explain`` gives them).

The page loads nothing: inline CSS, inline SVG and one inline script (a table filter) allowed by its hash in the
page's Content-Security-Policy, which forbids every other source. Every string from the snapshot or the policy is
escaped. The same inputs give the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, Protocol

from desched.executor import nodeutil
from desched.executor.cluster import Cluster, Json, key
from desched.executor.plugins import _nodeutilization as nu

if TYPE_CHECKING:
    from desched.executor.defaultevictor import DefaultEvictor
    from desched.executor.evictions import Eviction, PodEvictor
    from desched.executor.framework import EvictorVerdict, Handle, PluginError
    from desched.executor.releases import ReleaseDecisions
    from desched.policy.model import Policy

__all__ = ["NodeFigures", "Panel", "render", "utilization"]

#: The utilization plugins and what they call their sources, their destinations and the other nodes.
ROLES = {
    "LowNodeUtilization": ("overutilized", "underutilized", "appropriately utilized"),
    "HighNodeUtilization": ("underutilized", "destination", "cordoned"),
}


class NodeFigures(NamedTuple):
    """One node of a panel: its usage in percent of allocatable before and after the cycle, and its role for the
    plugin at each time (:data:`ROLES`; ``""`` without a plugin)."""

    name: str
    cordoned: bool
    before: nu.Percentages
    after: nu.Percentages
    role_before: str
    role_after: str


class Panel(NamedTuple):
    """The cycle's nodes as one utilization plugin sees them (``plugin`` ``""``: plain request usage, no plugin).
    ``low`` and ``high`` are the thresholds before the cycle and ``*_after`` after it (they differ only with
    ``useDeviationThresholds``); ``moves_*`` whether the plugin evicts at all on that state; ``error`` the plugin's
    error in this cycle (it then evicted nothing)."""

    profile: str
    plugin: str
    resources: list[str]
    low: nu.Percentages
    high: nu.Percentages | None
    low_after: nu.Percentages
    high_after: nu.Percentages | None
    moves_before: bool
    moves_after: bool
    error: str
    nodes: list[NodeFigures]


class _Splitter(Protocol):
    resources: list[str]

    def split(self, nodes: list[Json]) -> nu.Split: ...

    def moves(self, split: nu.Split) -> bool: ...


class _Requests:
    """The panel without a utilization plugin: cpu, memory and pods as the plugins count them, no thresholds."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.resources = list(nu.BASIC_RESOURCES)

    def split(self, nodes: list[Json]) -> nu.Split:
        usages = nu.snapshot(nodes, self.handle, self.resources)
        percents = {node.name: nu.percentages(node.usage, node.capacity) for node in usages}
        return nu.Split(usages, percents, {}, None, [], [])

    def moves(self, split: nu.Split) -> bool:
        return False


def utilization(
    policy: Policy,
    cluster: Cluster,
    now: datetime,
    evictors: dict[str, DefaultEvictor],
    pod_evictor: PodEvictor,
    evictions: Sequence[Eviction],
    errors: Iterable[PluginError],
    release: ReleaseDecisions,
) -> list[Panel]:
    """The panels of the page (see the module contract); ``cluster`` as before the cycle, ``evictors`` the cycle's
    DefaultEvictor per profile (the cycle ran: it was not skipped; a profile without one was skipped by its release
    and has no panel), ``errors`` its plugin errors, ``release`` the one whose decisions the cycle made (the plugins
    classify the nodes as it does)."""
    from desched.executor.framework import Handle, cycle_nodes
    from desched.executor.plugins import module_for

    splitters: list[tuple[str, str, _Splitter]] = []
    handle = None
    for profile in policy.profiles:
        evictor = evictors.get(profile.name)
        if evictor is None:
            continue
        handle = Handle(cluster, now, profile.name, evictor, pod_evictor, release=release)
        for ref, config in profile.evicting():
            module = module_for(ref.name)
            if ref.point == "balance" and ref.name in ROLES and config is not None and module is not None:
                splitters.append((profile.name, ref.name, module.Implementation(config.args, handle)))
    if not splitters and handle is not None:
        splitters.append(("", "", _Requests(handle)))
    nodes = cycle_nodes(policy, cluster)
    before = [splitter.split(nodes) for _, _, splitter in splitters]
    gone = {(e.namespace, e.pod) for e in evictions}
    with cluster.trial():
        for pod in [pod for pod in cluster.pods.values() if key(pod) in gone]:
            cluster.remove(pod)
        after = [splitter.split(nodes) for _, _, splitter in splitters]
    failed = {(error.profile, error.plugin): error.message for error in errors}
    return [
        _panel(profile, plugin, splitter, early, late, failed.get((profile, plugin), ""))
        for (profile, plugin, splitter), early, late in zip(splitters, before, after, strict=True)
    ]


def _panel(profile: str, plugin: str, splitter: _Splitter, before: nu.Split, after: nu.Split, error: str) -> Panel:
    names = ROLES.get(plugin, ("", "", ""))

    def roles(split: nu.Split) -> dict[str, str]:
        found = {node.name: names[2] for node in split.usages}
        found.update({node.name: names[1] for node in split.destinations})
        found.update({node.name: names[0] for node in split.sources})
        return found

    early, late = roles(before), roles(after)
    figures = [
        NodeFigures(
            node.name,
            nodeutil.is_unschedulable(node.node),
            before.percents[node.name],
            after.percents[node.name],
            early[node.name],
            late[node.name],
        )
        for node in before.usages
    ]
    return Panel(
        profile,
        plugin,
        list(splitter.resources),
        dict(before.low),
        before.high,
        dict(after.low),
        after.high,
        splitter.moves(before),
        splitter.moves(after),
        error,
        figures,
    )


# ---------------------------------------------------------------------------------------------------------------
# The page


def _text(value: object) -> str:
    """``value`` as HTML text or attribute value: every markup character escaped."""
    return html.escape(str(value), quote=True)


def _percent(value: float) -> str:
    return f"{value:.1f}%"


def _thresholds(values: nu.Percentages | None) -> str:
    if not values:
        return "none"
    return ", ".join(f"{_text(resource)} {_percent(limit)}" for resource, limit in values.items())


BAR_WIDTH = 160


def _bar(before: float, after: float, low: float | None, high: float | None) -> str:
    """An inline SVG: the usage before (light) and after (dark) the cycle on 0-100 %, the thresholds as lines."""

    def x(value: float) -> str:
        return f"{min(max(value, 0.0), 100.0) * BAR_WIDTH / 100:.1f}"

    marks = "".join(
        f'<line class="{name}" x1="{x(limit)}" x2="{x(limit)}" y1="0" y2="16"/>'
        for name, limit in (("low", low), ("high", high))
        if limit is not None
    )
    label = f"{_percent(before)} before, {_percent(after)} after"
    return (
        f'<svg class="bar" width="{BAR_WIDTH}" height="16" viewBox="0 0 {BAR_WIDTH} 16" role="img" '
        f'aria-label="{label}"><rect class="track" width="{BAR_WIDTH}" height="16"/>'
        f'<rect class="before" width="{x(before)}" height="16"/><rect class="after" y="4" width="{x(after)}" '
        f'height="8"/>{marks}</svg>'
    )


def _role(before: str, after: str) -> str:
    return _text(before or "-") if before == after else f"{_text(before)} &rarr; {_text(after)}"


def _moves(panel: Panel) -> str:
    """Whether the plugin evicts on the state before the cycle and would on the state after it."""
    if panel.error:
        return "The plugin failed in this cycle (below); the figures are its usage from pod requests"
    moves = "evicts" if panel.moves_before else "evicts nothing: no node to drain or none to take the pods"
    return f"Before the cycle the plugin {moves}; after it, it would " + (
        "evict again" if panel.moves_after else "evict nothing"
    )


def _panel_html(panel: Panel) -> str:
    if panel.plugin:
        title = f"{_text(panel.profile)} / {_text(panel.plugin)}"
        thresholds = f"<p>thresholds: {_thresholds(panel.low)}"
        if panel.high is not None:
            thresholds += f"; targetThresholds: {_thresholds(panel.high)}"
        if panel.low_after != panel.low or panel.high_after != panel.high:
            thresholds += f" (after the cycle: {_thresholds(panel.low_after)}"
            thresholds += f"; {_thresholds(panel.high_after)})" if panel.high_after is not None else ")"
        thresholds += f". {_moves(panel)}</p>"
    else:
        title, thresholds = "requests", "<p>No utilization plugin is enabled: usage from pod requests.</p>"
    error = f'<p class="error">the plugin failed: {_text(panel.error)}</p>' if panel.error else ""
    head = "".join(f"<th>{_text(resource)}</th>" for resource in panel.resources)
    rows = []
    for node in panel.nodes:
        cells = []
        for resource in panel.resources:
            low = panel.low.get(resource)
            high = None if panel.high is None else panel.high.get(resource)
            was, now = node.before.get(resource, 0.0), node.after.get(resource, 0.0)
            change = _percent(was) if was == now else f"{_percent(was)} &rarr; {_percent(now)}"
            cells.append(f'<td>{_bar(was, now, low, high)}<span class="figure">{change}</span></td>')
        cordoned = ' <span class="tag">cordoned</span>' if node.cordoned else ""
        rows.append(
            f'<tr data-node="{_text(node.name)}"><th scope="row">{_text(node.name)}{cordoned}</th>'
            f'<td class="role">{_role(node.role_before, node.role_after)}</td>{"".join(cells)}</tr>'
        )
    return (
        f'<div class="panel" data-plugin="{_text(panel.plugin)}"><h3>{title}</h3>{thresholds}{error}'
        f'<table class="nodes"><thead><tr><th>node</th><th>role</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _spread(spread: Json) -> str:
    return f"{spread['min']} / {spread['median']} / {spread['max']}"


def _evictions_html(document: Json) -> str:
    forecast = document.get("forecast")
    chosen = {(p["namespace"], p["pod"]): p["evictedIn"] for p in (forecast or {}).get("pods", [])}
    groups: dict[tuple[str, str], list[Json]] = {}
    for eviction in document["evictions"]:
        groups.setdefault((eviction["profile"], eviction["plugin"]), []).append(eviction)
    if not groups:
        return "<p>No pod is evicted in this run.</p>"
    parts = []
    samples = forecast["samples"] if forecast else 0
    for (profile, plugin), evictions in groups.items():
        extra = ""
        if forecast and plugin in forecast["byPlugin"]:
            extra = f" (min / median / max over {samples} listing orders: {_spread(forecast['byPlugin'][plugin])})"
        rows = "".join(
            f'<tr data-pod="{_text(e["namespace"])}/{_text(e["pod"])}"><td>{_text(e["namespace"])}</td>'
            f"<td>{_text(e['pod'])}</td><td>{_text(e['node'])}</td>"
            + (f"<td>{chosen.get((e['namespace'], e['pod']), 0)} of {samples}</td>" if forecast else "")
            + "</tr>"
            for e in evictions
        )
        column = "<th>chosen in</th>" if forecast else ""
        parts.append(
            f'<h3 data-plugin="{_text(plugin)}">{_text(profile)} / {_text(plugin)}: {len(evictions)}{extra}</h3>'
            f'<table class="evictions"><thead><tr><th>namespace</th><th>pod</th><th>node</th>{column}</tr>'
            f"</thead><tbody>{rows}</tbody></table>"
        )
    return "".join(parts)


def _forecast_html(forecast: Json) -> str:
    samples = forecast["samples"]
    rows = "".join(
        f'<tr data-pod="{_text(p["namespace"])}/{_text(p["pod"])}"><td>{_text(p["namespace"])}</td>'
        f"<td>{_text(p['pod'])}</td><td>{_text(p['node'])}</td><td>{_share(p['evictedIn'], samples)}</td></tr>"
        for p in forecast["pods"]
    )
    return (
        f'<section id="forecast"><h2>How often each pod is chosen</h2><p>Over {samples} listing orders '
        f"(seed {forecast['seed']}): evicted pods in total, min / median / max: {_spread(forecast['evicted'])}. "
        f'<span class="assurance">{_text(forecast["assurance"]["statement"])}.</span></p>'
        '<table class="forecast"><thead><tr><th>namespace</th><th>pod</th><th>node</th><th>evicted in</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></section>"
    )


def _refresh_html(refresh: Json) -> str:
    """The ``budgetRefresh`` range: per plugin and in total, min / max with budgets refreshed from never to after
    every eviction (docs/executor-semantics.md#53-budgets-refreshed-during-the-cycle)."""
    rows = "".join(
        f"<tr><td>{_text(name)}</td><td>{bounds['min']} / {bounds['max']}</td></tr>"
        for name, bounds in [("all plugins", refresh["evicted"]), *refresh["byPlugin"].items()]
    )
    return (
        '<section id="budget-refresh"><h2>With budgets refreshed during the cycle</h2><p>Over the same '
        f"{refresh['samples']} listing orders, with every PodDisruptionBudget refreshed {_text(refresh['refreshes'])} "
        "by the disruption controller: evictions, min / max.</p>"
        '<table class="forecast"><thead><tr><th>plugin</th><th>min / max</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _share(count: int, samples: int) -> str:
    width = f"{count * BAR_WIDTH / samples:.1f}"
    return (
        f'<svg class="bar" width="{BAR_WIDTH}" height="16" viewBox="0 0 {BAR_WIDTH} 16" role="img" '
        f'aria-label="{count} of {samples}"><rect class="track" width="{BAR_WIDTH}" height="16"/>'
        f'<rect class="after" y="4" width="{width}" height="8"/></svg><span class="figure">{count} of {samples}</span>'
    )


def _problems_html(document: Json) -> str:
    lines = [
        f"<li>{_text(f['namespace'])}/{_text(f['pod'])} ({_text(f['profile'])} / {_text(f['plugin'])}): "
        f"{_text(f['message'])}</li>"
        for f in document["failures"]
    ] + [
        f"<li>plugin error: {_text(e['profile'])} / {_text(e['plugin'])}: {_text(e['message'])}</li>"
        for e in document["pluginErrors"]
    ]
    if not lines:
        return ""
    return f'<section id="failures"><h2>Evictions tried and not done</h2><ul>{"".join(lines)}</ul></section>'


def _verdicts_html(verdicts: Sequence[EvictorVerdict], evicted: int) -> str:
    protected = [v for v in verdicts if not v.evictable]
    reasons = Counter(v.reason for v in protected)
    summary = "".join(
        f"<li>{count} &times; {_text(reason)}</li>" for reason, count in sorted(reasons.items(), key=_most_first)
    )
    rows = "".join(
        f'<tr data-pod="{_text(v.namespace)}/{_text(v.pod)}"><td>{_text(v.namespace)}</td><td>{_text(v.pod)}</td>'
        f"<td>{_text(v.node or '-')}</td><td>{_text(v.profile)}</td><td>{_text(v.reason)}</td></tr>"
        for v in protected
    )
    evictable = len(verdicts) - len(protected)
    return (
        '<section id="verdicts"><h2>Why pods were not evicted</h2>'
        f"<p>The DefaultEvictor judged the {len(verdicts)} pods the plugins considered: {evictable} evictable (the "
        f"plugins evicted {evicted}), {len(protected)} protected:</p><ul>{summary}</ul>"
        '<p><label>filter <input id="filter" type="search" placeholder="namespace, pod, node or reason"></label></p>'
        '<table class="verdicts" id="protected"><thead><tr><th>namespace</th><th>pod</th><th>node</th>'
        f"<th>profile</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;
color:#1d2330;background:#fff}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d8dde6}
h3{font-size:1em;margin:1.2em 0 .3em}
.meta{color:#556}.cards{display:flex;gap:1em;flex-wrap:wrap}
.card{border:1px solid #d8dde6;border-radius:6px;padding:.5em 1em;min-width:9em}
.card b{display:block;font-size:1.6em}
table{border-collapse:collapse;margin:.4em 0}th,td{padding:.25em .7em;text-align:left;vertical-align:middle;
border-bottom:1px solid #eceff4}thead th{background:#f4f6f9}
.bar{vertical-align:middle;margin-right:.4em}.track{fill:#eceff4}.before{fill:#a9c4ef}.after{fill:#2857a4}
.low{stroke:#1a8a3a;stroke-width:2}.high{stroke:#c0392b;stroke-width:2}
.figure{font-variant-numeric:tabular-nums;white-space:nowrap}
.tag{font-size:.8em;background:#fbe9c6;border-radius:3px;padding:0 .3em}.error{color:#a4161a}
.legend span{margin-right:1.2em}.swatch{display:inline-block;width:1em;height:.7em;margin-right:.3em}
""".strip()

SCRIPT = """
document.getElementById("filter")?.addEventListener("input", (event) => {
  const wanted = event.target.value.toLowerCase();
  for (const row of document.querySelectorAll("#protected tbody tr")) {
    row.hidden = wanted !== "" && !row.textContent.toLowerCase().includes(wanted);
  }
});
""".strip()


def _policy_header() -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


LEGEND = (
    '<span><i class="swatch" style="background:#a9c4ef"></i>before the cycle</span>'
    '<span><i class="swatch" style="background:#2857a4"></i>after it (without the evicted pods)</span>'
)
THRESHOLD_LEGEND = (
    '<span><i class="swatch" style="background:#1a8a3a"></i>thresholds</span>'
    '<span><i class="swatch" style="background:#c0392b"></i>targetThresholds</span>'
)


def _legend(panels: Sequence[Panel]) -> str:
    """The bars' colours, the threshold lines' only when some panel has them."""
    lines = THRESHOLD_LEGEND if any(panel.plugin for panel in panels) else ""
    return f'<p class="legend">{LEGEND}{lines}</p>'


def render(
    document: Json,
    panels: Sequence[Panel],
    verdicts: Sequence[EvictorVerdict],
    now: datetime,
    sources: tuple[str, str],
    dry_run: bool,
) -> str:
    """The page (see the module contract): ``document`` is ``simulate``'s JSON document, ``sources`` the policy and
    snapshot as the command line named them."""
    summary = document["summary"]
    forecast = document.get("forecast")
    mode = "upstream's --dry-run" if dry_run else "a real run"
    cards = [("evicted", str(summary["evicted"])), ("not done", str(len(document["failures"])))]
    if forecast:
        cards.append((f"over {forecast['samples']} orders", _spread(forecast["evicted"])))
    cards.append(("plugin errors", str(len(document["pluginErrors"]))))
    if summary["skippedCycle"]:
        body = "<p>The cycle is skipped: fewer than 2 ready nodes match the policy's nodeSelector.</p>"
    else:
        body = (
            f'<section id="utilization"><h2>Node utilization</h2>{_legend(panels)}'
            f"{''.join(_panel_html(panel) for panel in panels)}</section>"
            f'<section id="evictions"><h2>Evictions by plugin</h2>{_evictions_html(document)}</section>'
            + (_forecast_html(forecast) if forecast else "")
            + (_refresh_html(document["budgetRefresh"]) if "budgetRefresh" in document else "")
            + _problems_html(document)
            + _verdicts_html(verdicts, summary["evicted"])
        )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{_policy_header()}'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>desched forecast</title><style>{STYLE}</style></head><body>"
        "<header><h1>desched simulate: one descheduling cycle</h1>"
        f'<p class="meta">policy {_text(sources[0])} on snapshot {_text(sources[1])}, at {_text(now.isoformat())}, '
        f"as {mode}</p></header>"
        '<div class="cards">'
        + "".join(f'<div class="card" data-card="{name}"><b>{value}</b>{name}</div>' for name, value in cards)
        + f"</div>{body}<script>{SCRIPT}</script></body></html>\n"
    )
