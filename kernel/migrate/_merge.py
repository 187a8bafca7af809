"""Converted profiles, and the optional fold of one-profile-per-strategy output into a single profile.

Why folding is safe (docs/policy-api.md#34-runtime-order): each cycle runs the Deschedule plugins of every profile, in
profile order, and then the Balance plugins of every profile, in profile order. The merged profile lists the deschedule
plugins in profile order and the balance plugins in profile order, so the plugins run in the same sequence; and it is
only done when every profile's DefaultEvictor args are the same, so every plugin filters pods exactly as before.
Eviction limits are global, not per profile. What changes is the profile name seen in logs, metrics and the eviction
reason.
"""

from __future__ import annotations

from typing import Any

from desched.tree import Path

__all__ = ["MERGED_NAME", "ConvertedProfile", "merge"]


MERGED_NAME = "default"
_EVICTOR = "DefaultEvictor"


class ConvertedProfile:
    """One output profile: its body and ``origins`` relative to the profile (profile path -> source path)."""

    __slots__ = ("body", "name", "origins")

    def __init__(self, name: str, body: dict[str, Any], origins: dict[Path, Path]) -> None:
        self.name = name
        self.body = body
        self.origins = origins


def _semantic(args: Any) -> Any:
    """DefaultEvictor args as phase D sees them: ``priorityThreshold: {}`` and no priorityThreshold are the same."""
    if isinstance(args, dict) and args.get("priorityThreshold") == {}:
        return {key: value for key, value in args.items() if key != "priorityThreshold"}
    return args


def _moved(origins: dict[Path, Path], old: Path, new: Path) -> dict[Path, Path]:
    return {(*new, *path[len(old) :]): src for path, src in origins.items() if path[: len(old)] == old}


def merge(profiles: list[ConvertedProfile], source_root: Path) -> tuple[list[ConvertedProfile], str | None, bool]:
    """``(profiles, message, merged)``: one profile named ``default`` when every DefaultEvictor's args agree."""
    if not profiles:
        return profiles, None, False
    first = _semantic(profiles[0].body["pluginConfig"][0]["args"])
    for profile in profiles[1:]:
        other = _semantic(profile.body["pluginConfig"][0]["args"])
        if other != first:
            keys = sorted(key for key in {*first, *other} if first.get(key) != other.get(key))
            return (
                profiles,
                f"profiles were not merged: the DefaultEvictor args of {profiles[0].name} and {profile.name} differ "
                f"({', '.join(keys)}), and one profile has one DefaultEvictor",
                False,
            )
    entries: list[dict[str, Any]] = [profiles[0].body["pluginConfig"][0]]
    origins: dict[Path, Path] = {
        (): source_root,
        **_moved(profiles[0].origins, ("pluginConfig", 0), ("pluginConfig", 0)),
    }
    points: dict[str, list[str]] = {"deschedule": [], "balance": []}
    for profile in profiles:
        for index, entry in enumerate(profile.body["pluginConfig"]):
            if index == 0 and entry.get("name") == _EVICTOR:
                continue
            origins.update(_moved(profile.origins, ("pluginConfig", index), ("pluginConfig", len(entries))))
            entries.append(entry)
        for point, names in points.items():
            plugin_set = profile.body["plugins"].get(point)
            for position, name in enumerate(plugin_set["enabled"] if plugin_set else []):
                src = profile.origins.get(("plugins", point, "enabled", position))
                if src is not None:
                    origins[("plugins", point, "enabled", len(names))] = src
                names.append(name)
    plugins: dict[str, Any] = {point: {"enabled": names} for point, names in points.items() if names}
    plugins["filter"] = {"enabled": [_EVICTOR]}
    plugins["preevictionfilter"] = {"enabled": [_EVICTOR]}
    body = {"name": MERGED_NAME, "pluginConfig": entries, "plugins": plugins}
    listed = ", ".join(profile.name for profile in profiles)
    message = (
        f"the {len(profiles)} profile(s) ({listed}) were merged into one profile named {MERGED_NAME}: same plugins, "
        "same DefaultEvictor args, same execution order (deschedule plugins of every profile run before balance "
        "plugins); only the profile name in logs, metrics and eviction reasons changes"
    )
    return [ConvertedProfile(MERGED_NAME, body, origins)], message, True
