"""The policy ``desched simulate`` and ``desched run`` execute: a file's effective v1alpha2 policy, let through the
lint gate only when it has no lint errors, and the release it runs on (:func:`load_policy`)."""

from __future__ import annotations

import sys
from typing import NamedTuple

from desched.errors import UsageError
from desched.executor.releases import ReleaseDecisions
from desched.policy.model import Policy

__all__ = ["Loaded", "load_policy"]


class Loaded(NamedTuple):
    """A policy to execute and the release whose decisions the executor makes for it."""

    policy: Policy
    release: ReleaseDecisions


def load_policy(path: str, target_text: str | None) -> Loaded:
    """The typed v1alpha2 policy ``path`` stands for (its effective form, which the lint gate computed), after the
    lint gate (see the module docstring), with its release: ``target_text`` (``--target-version``) when given, else
    the one the lint gate inferred from what the file deploys (the newest when nothing says)."""
    from desched import versions
    from desched.linter.engine import Settings, lint_file
    from desched.linter.formatters import findings_report, get
    from desched.plugins import OPENSHIFT

    try:
        target = versions.parse(target_text) if target_text else None
    except ValueError as error:
        raise UsageError(str(error)) from None
    # OpenShift's build registers every upstream plugin and more: prepare_policy names the ones desched cannot run
    settings = Settings(target=target, distribution=OPENSHIFT)
    try:
        result = lint_file(path, settings)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    errors = [finding for finding in result.findings if finding.severity == "error" and not finding.suppressed]
    if errors:
        sys.stderr.write(get("text")(findings_report(errors, 1, {result.file: result.text}, "never")))
        raise UsageError(f"{path}: the policy has lint errors ({len(errors)}); fix them before running it")
    for finding in result.findings:  # what upstream runs all the same, but the reader should know
        if finding.severity == "warning" and not finding.suppressed:
            where = f"{finding.file}:{finding.line}:{finding.column}"
            sys.stderr.write(f"desched: warning: {where}: {finding.message} ({finding.rule})\n")
    if not result.checked:
        raise UsageError(f"no descheduler policy in {path}")
    if len(result.checked) > 1:
        raise UsageError(f"{path} holds {len(result.checked)} policies; give a file with exactly one")
    checked = result.checked[0]
    return Loaded(checked.effective.policy, ReleaseDecisions(checked.release.target))
