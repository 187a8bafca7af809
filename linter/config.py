"""Project configuration: ``.desched.yaml`` or ``[tool.desched]`` in ``pyproject.toml``.

Discovery starts in the current directory and walks up to the filesystem root (stopping after a directory that
holds ``.git``). The first ``.desched.yaml``/``.desched.yml`` wins; otherwise a ``pyproject.toml`` with a
``[tool.desched]`` table. Keys::

    target-version: v0.33            # descheduler release the policies run on
    kubernetes-version: "1.30"       # the cluster's Kubernetes version (DS614; quoted: YAML reads 1.30 as 1.3)
    distribution: openshift          # descheduler build that runs them: upstream or openshift (default: inferred)
    clusters:                        # which files deploy to which cluster (default: from kustomizations, Flux, Argo CD)
      prod: ["clusters/prod", "apps/prod"]
      staging: ["clusters/staging/**"]
    ignore: ["vendor/**"]            # globs of paths not to lint
    strict: false                    # warnings fail the run too
    rules:
      DS305: warning                 # a severity, or "disable" / "enable"
      DS311: {severity: error, min-seconds: 300}   # severity, enabled, and rule options

:func:`load` validates everything against the registry and raises :class:`ConfigError` with the file name.
"""

from __future__ import annotations

import os
from typing import Any

from desched import versions
from desched.errors import ConfigError
from desched.linter.finding import SEVERITIES
from desched.plugins import DISTRIBUTIONS

__all__ = ["Config", "ConfigError", "discover", "load"]

_NAMES = (".desched.yaml", ".desched.yml")


class Config:
    """A validated configuration; empty when no file applies."""

    __slots__ = (
        "clusters",
        "disabled",
        "distribution",
        "ignore",
        "kubernetes",
        "options",
        "severities",
        "source",
        "strict",
        "target",
    )

    def __init__(self, source: str | None = None) -> None:
        self.target: int | None = None
        self.kubernetes: versions.KubernetesVersion | None = None
        self.distribution: str | None = None
        self.clusters: dict[str, list[str]] = {}
        self.ignore: list[str] = []
        self.strict = False
        self.disabled: set[str] = set()
        self.severities: dict[str, str] = {}
        self.options: dict[str, dict[str, Any]] = {}
        self.source = source


def discover(start: str | None = None) -> str | None:
    """Path of the configuration file that applies to ``start`` (the current directory by default), if any."""
    directory = os.path.abspath(start or os.getcwd())
    while True:
        for name in _NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(pyproject) and _has_tool_table(pyproject):
            return pyproject
        parent = os.path.dirname(directory)
        if parent == directory or os.path.isdir(os.path.join(directory, ".git")):
            return None
        directory = parent


def _has_tool_table(path: str) -> bool:
    with open(path, "rb") as handle:
        return b"[tool.desched" in handle.read()


def _read(path: str) -> Any:
    if path.endswith(".toml"):
        import tomllib

        with open(path, "rb") as handle:
            return tomllib.load(handle).get("tool", {}).get("desched", {})
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def load(path: str) -> Config:
    """Read and validate the configuration at ``path``."""
    from desched.linter import rules

    try:
        raw = _read(path)
    except (OSError, ValueError, Exception) as exc:  # yaml and toml errors subclass Exception only
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: configuration must be a mapping")
    config = Config(source=path)
    for key, value in raw.items():
        where = f"{path}: {key}"
        if key == "target-version":
            try:
                config.target = versions.parse(str(value))
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        elif key == "kubernetes-version":
            config.kubernetes = _kubernetes(value, where, f"{key} in {path}")
        elif key == "clusters":
            config.clusters = _clusters(value, where)
        elif key == "distribution":
            if not isinstance(value, str) or value not in DISTRIBUTIONS:
                raise ConfigError(f"{where}: expected one of {', '.join(DISTRIBUTIONS)}")
            config.distribution = value
        elif key == "ignore":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{where}: expected a list of glob strings")
            config.ignore = list(value)
        elif key == "strict":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false")
            config.strict = value
        elif key == "rules":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a mapping of rule ID to setting")
            for name, setting in value.items():
                try:
                    rule_id = rules.resolve(str(name))
                except KeyError as exc:
                    raise ConfigError(f"{where}: {exc.args[0]}") from None
                _apply_rule(config, rule_id, setting, f"{where}.{name}", rules.get(rule_id))
        else:
            raise ConfigError(
                f"{where}: unknown key (expected target-version, kubernetes-version, distribution, clusters, ignore, "
                "strict or rules)"
            )
    return config


def _kubernetes(value: Any, where: str, source: str) -> versions.KubernetesVersion:
    """The cluster's Kubernetes version (DS614): a string, as YAML and TOML read ``1.30`` as the number 1.3."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ConfigError(f'{where}: write the version as a quoted string ("1.30"): {value!r} is read as a number')
    if not isinstance(value, str):
        raise ConfigError(f'{where}: expected the cluster\'s Kubernetes version as a string, such as "1.30"')
    try:
        return versions.parse_kubernetes(value, source)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _clusters(value: Any, where: str) -> dict[str, list[str]]:
    """``clusters:``: cluster name -> a glob or a list of globs of the paths deployed to it."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of cluster name to path globs")
    found: dict[str, list[str]] = {}
    for name, globs in value.items():
        globs = [globs] if isinstance(globs, str) else globs
        if not isinstance(globs, list) or not globs or not all(isinstance(glob, str) for glob in globs):
            raise ConfigError(f"{where}.{name}: expected a glob or a list of globs")
        found[str(name)] = list(globs)
    return found


def _apply_rule(config: Config, rule_id: str, setting: Any, where: str, module: Any) -> None:
    if isinstance(setting, str):
        setting = {"enabled": setting != "disable"} if setting in ("disable", "enable") else {"severity": setting}
    elif isinstance(setting, bool):
        setting = {"enabled": setting}
    if not isinstance(setting, dict):
        raise ConfigError(f"{where}: expected a severity, disable/enable, or a mapping")
    allowed = dict(getattr(module, "OPTIONS", {}))
    for key, value in setting.items():
        if key == "severity":
            if value not in SEVERITIES:
                raise ConfigError(f"{where}.severity: expected one of {', '.join(SEVERITIES)}")
            config.severities[rule_id] = value
        elif key == "enabled":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.enabled: expected true or false")
            (config.disabled.discard if value else config.disabled.add)(rule_id)
        elif key in allowed:
            if type(value) is not type(allowed[key]):
                raise ConfigError(f"{where}.{key}: expected {type(allowed[key]).__name__}")
            config.options.setdefault(rule_id, {})[key] = value
        else:
            known = ", ".join(["severity", "enabled", *allowed]) or "severity, enabled"
            raise ConfigError(f"{where}: unknown option {key!r} (expected {known})")
