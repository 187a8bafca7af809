"""Write a released image's digest into the deploy manifests and the Helm chart (``scripts/image pin-digest``).

Contract: :func:`pin` edits, in place and keeping every other line, each ``kustomization.yaml`` under ``deploy/``
whose ``images:`` list has an entry ``name: desched``: that entry gets ``newTag: "VERSION"`` and ``digest:
"sha256:..."`` (kustomize uses the digest when both are set; the tag stays for readers). If the chart's values file
(``deploy/chart/desched/values.yaml``) exists, its top-level ``image:`` mapping gets ``tag`` and ``digest`` the same
way. It returns the files that name the image (each now pinned), and raises :class:`PinError` if the digest is not
``sha256:`` and 64 hex digits, if the version is not one, or if no manifest names the image (a release that pins
nothing is an error).
"""

from __future__ import annotations

import re
from pathlib import Path

IMAGE = "desched"
CHART_VALUES = Path("chart") / "desched" / "values.yaml"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]*")


class PinError(Exception):
    """The digest or version is malformed, or no manifest names the image."""


def _set_keys(lines: list[str], start: int, indent: str, values: dict[str, str]) -> None:
    """Set ``values`` in the mapping whose keys sit at ``indent`` from line ``start`` on (keys it lacks are added)."""
    end = start
    while end < len(lines) and ((lines[end].startswith(indent) and lines[end].strip()) or not lines[end].strip()):
        end += 1
    for key, value in values.items():
        line = f'{indent}{key}: "{value}"'
        for number in range(start, end):
            if re.match(rf"{re.escape(indent)}{key}:", lines[number]):
                lines[number] = line
                break
        else:
            lines.insert(end, line)
            end += 1


def _pin_kustomization(text: str, values: dict[str, str]) -> str | None:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = re.fullmatch(rf"(\s*)- name: {IMAGE}\s*", line)
        if match and any(re.fullmatch(r"images:\s*", above) for above in lines[:number]):
            _set_keys(lines, number + 1, match.group(1) + "  ", values)
            return "\n".join(lines) + "\n"
    return None


def _pin_values(text: str, values: dict[str, str]) -> str | None:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if re.fullmatch(r"image:\s*(#.*)?", line):
            following = next((below for below in lines[number + 1 :] if below.strip()), "")
            indent = re.match(r"\s*", following)
            _set_keys(lines, number + 1, indent.group(0) if indent and indent.group(0) else "  ", values)
            return "\n".join(lines) + "\n"
    return None


def pin(deploy: Path, version: str, digest: str) -> list[Path]:
    """Pin ``version`` and ``digest`` in the manifests under ``deploy`` (see the module contract)."""
    if not DIGEST.fullmatch(digest):
        raise PinError(f"{digest!r} is not a digest (sha256: and 64 hex digits)")
    if not VERSION.fullmatch(version):
        raise PinError(f"{version!r} is not a version")
    changed: list[Path] = []
    edits = [(path, _pin_kustomization) for path in sorted(deploy.rglob("kustomization.yaml"))]
    if (deploy / CHART_VALUES).is_file():
        edits.append((deploy / CHART_VALUES, _pin_values))
    for path, edit in edits:
        text = path.read_text(encoding="utf-8")
        pinned = edit(text, {"newTag" if edit is _pin_kustomization else "tag": version, "digest": digest})
        if pinned is not None:
            if pinned != text:
                path.write_text(pinned, encoding="utf-8")
            changed.append(path)
    if not changed:
        raise PinError(f"no kustomization under {deploy} names the image {IMAGE!r}")
    return changed
