"""Rewrite a file so that every ``descheduler/v1alpha1`` policy in it becomes ``descheduler/v1alpha2``, and nothing else
changes.

Policies are found by the policy locator (:func:`desched.gitops.documents.locate_policies`), as lint finds them: raw
documents (also ``kind: List`` items), any ConfigMap ``data`` key holding a policy, and Helm values
(``deschedulerPolicy`` + ``deschedulerPolicyAPIVersion``).
Each is converted by :func:`desched.migrate.convert.convert` (strict: what upstream refuses is an error and the file is
left as it is).

The rewrite is textual: libyaml's node positions say which lines hold the policy, and only those lines are replaced.
Every other byte of the file (other documents, the ConfigMap around an embedded policy, other chart values, and
the policy's own ``apiVersion``, ``kind``, ``nodeSelector`` and limits) is kept as written, with its comments and
quoting. The new ``profiles`` are written in the file's own indentation; a value carried over unchanged
(``namespaces``, ``thresholds``, ...) is copied from the source text, so it keeps its flow or block style, quoting
and comments. Comments on a strategy move to the profile made from it (or to the plugin entry, when profiles are
merged); a comment on an evict flag moves to the DefaultEvictor argument made from it. Every conversion note is
written as a ``# desched migrate: ...`` comment next to what it concerns and returned with its line for stderr.
An embedded policy is rewritten in its own text and put back in the same block scalar style and indentation.

Before a result is returned the new text is parsed again and must hold exactly the expected data: the converted
policies where the old ones were, everything else equal. If copying source text breaks that, the policy is written
from data instead; if that fails too, the file is reported as an error and left unchanged. A file with no
v1alpha1 policy is returned unchanged, byte for byte, without being re-serialised.

This module is the entry point and runs the phases, each in a module of its own: :mod:`~desched.migrate._locate`
finds what to rewrite and where it is written, :mod:`~desched.migrate._plan` converts each policy and decides the
edits, :mod:`~desched.migrate._emit` writes their text and makes them, :mod:`~desched.migrate._verify` checks the
result.
"""

from typing import NamedTuple

from desched.deployment.releases import Deployments
from desched.gitops.documents import Shape
from desched.migrate._emit import apply
from desched.migrate._locate import (
    TEXT_SHAPES,
    Candidate,
    MigrationProblem,
    Refused,
    Source,
    Unsafe,
    embedded_problem,
    find_candidates,
    load,
)
from desched.migrate._plan import COMMENT_PREFIX, MigrationOptions, Texts, plan
from desched.migrate._verify import verified
from desched.migrate.convert import Note

__all__ = ["COMMENT_PREFIX", "MigrationProblem", "Result", "migrate_text"]


class Result(NamedTuple):
    """``text`` is the migrated text (the input itself when nothing changed or on errors); ``notes`` pair each
    conversion note with its 1-based line in the input; ``errors`` is non-empty when the file was refused."""

    text: str
    changed: bool
    notes: list[tuple[Note, int]]
    errors: list[MigrationProblem]


def migrate_text(
    name: str,
    text: str,
    *,
    target: int | None = None,
    upstream_compatible: bool = False,
    merge_profiles: bool = False,
    chart_version: str | None = None,
    deployments: Deployments | None = None,
) -> Result:
    """Migrate every v1alpha1 policy in ``text`` (the contents of file ``name``).

    ``target`` is the descheduler release (minor number) the output is for. ``None`` takes, per policy, the release
    deployed with it (:mod:`desched.deployment.releases`: the descheduler in ``text`` or in ``deployments`` that reads
    it; for Helm values their ``image.tag``, the chart version a GitOps wrapper pins, or ``chart_version``, a
    ``Chart.yaml`` ``appVersion`` the caller found); else output every release from v0.31 to v0.36 accepts
    (:data:`~desched.migrate._plan.PORTABLE`). A note says which release each policy was written for.
    Never raises for bad input: what cannot be migrated comes back in ``errors``, with the text unchanged. Text
    that mentions neither ``v1alpha1`` nor ``strategies`` is returned at once, unparsed: it cannot hold a v1alpha1
    policy, and need not be YAML (a Helm template is not).
    """
    if "v1alpha1" not in text and "strategies" not in text:
        return Result(text, False, [], [])  # cannot hold a v1alpha1 policy; need not even be YAML (Helm templates)
    options = MigrationOptions(
        target, upstream_compatible, merge_profiles, chart_version, name, deployments or Deployments()
    )
    try:
        new, notes = _migrate_stream(text, options, raw_only=False)
    except Refused as exc:
        return Result(text, False, [], sorted(exc.problems, key=lambda problem: (problem.line, problem.column)))
    return Result(new, new != text, notes, [])


def _migrate_stream(
    text: str, options: MigrationOptions, raw_only: bool, outer: Candidate | None = None
) -> tuple[str, list[tuple[Note, int]]]:
    """The migrated text of one YAML stream and its notes with their lines: a file, or the text of the key of
    ``outer`` (``raw_only`` for a ConfigMap key's: raw policies only). Locate, plan and emit; the new text must
    verify (:func:`_rewritten`)."""
    docs = load(text)
    if not raw_only:
        options = options._replace(deployments=options.deployments.extended((options.name, doc) for doc in docs))
    candidates = find_candidates(docs, raw_only, outer, options.deployments, options.name)
    if not candidates:
        return text, []
    texts = _migrate_texts(text, candidates, options)
    candidates = [
        candidate
        for candidate in candidates
        if candidate.shape not in TEXT_SHAPES or texts[candidate.path][0] != candidate.text
    ]
    if not candidates:
        return text, []
    return _rewritten(Source(text, docs), candidates, texts, options)


def _rewritten(
    source: Source, candidates: list[Candidate], texts: Texts, options: MigrationOptions
) -> tuple[str, list[tuple[Note, int]]]:
    """The new text of ``source`` with ``candidates`` rewritten, and its notes: planned with source text reused, else
    written from data, and verified; the file is refused when neither verifies."""
    for reuse in (True, False):
        try:
            planned = plan(source, candidates, texts, options, reuse)
            new = apply(source.lines, planned.edits)
            if verified(new, source.nodes, planned.subs):
                return new, sorted(planned.notes, key=lambda item: item[1])
        except Unsafe:
            pass
    line, column = source.position(candidates[0].path)
    raise Refused(MigrationProblem("cannot rewrite this file without changing more than the policy", line, column))


def _migrate_texts(text: str, candidates: list[Candidate], options: MigrationOptions) -> Texts:
    """The text of every ConfigMap key and values string among ``candidates``, migrated as a stream of its own; the
    problems of all of them, placed in ``text``, refuse the file together."""
    texts: Texts = {}
    problems: list[MigrationProblem] = []
    for candidate in candidates:
        if candidate.shape in TEXT_SHAPES:
            try:
                texts[candidate.path] = _migrate_stream(
                    candidate.text, options, candidate.shape == Shape.CONFIGMAP, candidate
                )
            except Refused as exc:
                problems.extend(embedded_problem(text, candidate, problem) for problem in exc.problems)
    if problems:
        raise Refused(*problems)
    return texts
