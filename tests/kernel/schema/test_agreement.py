"""(c) On the corpus, the structural schema rejects a policy exactly when the structural checker reports a problem.

The comparison uses ``policy_schema(..., semantic=False)``: enums and value ranges are validator matters, not
structure. A second test pins the checker's verdict to what upstream decodes (the ``# expect:`` header), so that the
two cannot agree by both being wrong.
"""

from __future__ import annotations

import pytest

from .cases import Case, checker_problems, corpus, params, schema_errors


def test_corpus_is_broad() -> None:
    cases = corpus()
    assert len(cases) >= 40
    assert sum(bool(case.valid) for case in cases) >= 15
    assert sum(not case.valid for case in cases) >= 15
    assert {case.api for case in cases} == {"v1alpha1", "v1alpha2"}


@pytest.mark.parametrize(("case", "target"), params("agree"))
def test_schema_agrees_with_structure_checker(case: Case, target: int) -> None:
    problems = checker_problems(case.data, target, case.api)
    errors = schema_errors(case.data, target, case.api)
    assert bool(errors) == bool(problems), (
        f"{case.name} at v0.{target}: the schema says {errors or 'valid'}, the checker says {problems or 'valid'}"
    )


@pytest.mark.parametrize(("case", "target"), params("expect"))
def test_structure_checker_matches_upstream(case: Case, target: int) -> None:
    problems = checker_problems(case.data, target, case.api)
    expected = target in case.valid
    assert bool(problems) != expected, (
        f"{case.name} at v0.{target}: upstream decodes it {'cleanly' if expected else 'with a problem'}, "
        f"the checker says {problems or 'valid'}"
    )
