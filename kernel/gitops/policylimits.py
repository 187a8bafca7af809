"""The size limits of the policies found in one file, checked on their composed trees before any rule reads them.

Contract: :func:`within_limits` splits a file's policies into those the rules may read and those over a limit, each
with a :class:`Breach` naming the limit and the path where it is reported. A policy has at most
:data:`MAX_PROFILES` profiles (a KubeDescheduler: ``spec.profiles``), each with at most :data:`MAX_PLUGIN_CONFIGS`
``pluginConfig`` entries; the policies of one file hold at most :data:`MAX_POLICY_NODES` YAML nodes together,
counted as the loader counts them (every scalar, keys included, and collection; an alias as the nodes it stands
for), so that the rules' work per file is bounded however the nodes are shared out. These are the webhook's default
limits per policy text (``desched.webhook.limits.PolicyLimits``), which it checks before parsing; the file as a
whole is bounded while it is read (:data:`desched.reading.yamlnodes.MAX_EXPANDED_NODES`).
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

from desched.gitops.documents import PolicyDoc, Shape

__all__ = ["MAX_PLUGIN_CONFIGS", "MAX_POLICY_NODES", "MAX_PROFILES", "Breach", "count_nodes", "within_limits"]

MAX_PROFILES = 256
MAX_PLUGIN_CONFIGS = 64  # per profile: upstream has 13 plugins, each configured once
MAX_POLICY_NODES = 100_000


class Breach(NamedTuple):
    """A limit a policy exceeds: why, and the path (in the policy) of what goes past it."""

    message: str
    path: tuple[str | int, ...]


def within_limits(docs: Sequence[PolicyDoc]) -> tuple[list[PolicyDoc], list[tuple[PolicyDoc, Breach]]]:
    """The policies of one file the rules may read, in order, and those over a limit with their breach. Past the
    file's node limit, only the policy that went past it is listed: its breach counts the policies after it, which
    are not read either."""
    kept: list[PolicyDoc] = []
    refused: list[tuple[PolicyDoc, Breach]] = []
    left = MAX_POLICY_NODES
    for index, doc in enumerate(docs):
        breach = _shape_breach(doc)
        if breach is not None:
            refused.append((doc, breach))
            continue
        nodes = count_nodes(doc.root, left)
        if nodes > left:
            message = f"the policies of this file hold more than {MAX_POLICY_NODES} YAML nodes, the limit"
            later = len(docs) - index - 1
            if later:
                message += f" ({later} more after this one are not checked either)"
            refused.append((doc, Breach(message, ())))
            break
        left -= nodes
        kept.append(doc)
    return kept, refused


def _shape_breach(doc: PolicyDoc) -> Breach | None:
    """The first of the profile and pluginConfig limits ``doc`` exceeds, or None."""
    where: tuple[str, ...] = ("spec", "profiles") if doc.shape == Shape.KUBEDESCHEDULER else ("profiles",)
    profiles = _at(doc.root, where)
    if not isinstance(profiles, list):
        return None
    if len(profiles) > MAX_PROFILES:
        return Breach(f"{len(profiles)} profiles exceed the limit of {MAX_PROFILES}", (*where, MAX_PROFILES))
    for index, profile in enumerate(profiles):
        entries = profile.get("pluginConfig") if isinstance(profile, dict) else None
        if isinstance(entries, list) and len(entries) > MAX_PLUGIN_CONFIGS:
            name = f"profile {profile['name']!r}" if isinstance(profile.get("name"), str) else f"profile {index}"
            message = f"{name}: {len(entries)} pluginConfig entries exceed the limit of {MAX_PLUGIN_CONFIGS}"
            return Breach(message, (*where, index, "pluginConfig", MAX_PLUGIN_CONFIGS))
    return None


def count_nodes(value: Any, stop: int) -> int:
    """The nodes of the composed tree ``value``, counted until more than ``stop`` (so that cycles end too)."""
    count, pending = 0, [value]
    while pending and count <= stop:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            count += len(item)  # the keys
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count


def _at(root: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        root = root.get(key) if isinstance(root, dict) else None
    return root
