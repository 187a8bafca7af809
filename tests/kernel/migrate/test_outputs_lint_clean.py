"""What desched migrate writes lints clean under the release it was written for: every golden output has no error
and no warning, linted at the one release its notes name, or, written for a range because no release is deployed
with it, linted as lint sees it then (no release known)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desched import versions
from desched.linter.engine import Settings, lint_text

GOLDEN = Path(__file__).parent / "golden"
OUTPUTS = sorted(path for path in GOLDEN.iterdir() if ".out." in path.name)
_WRITTEN_FOR = re.compile(r"written for descheduler v0\.(\d+)(?:-v0\.(\d+))?")


def _release(output: Path) -> int | None:
    """The release the notes beside ``output`` say it was written for; ``None`` for a range of releases."""
    notes = output.with_name(output.name.split(".out.")[0] + ".notes").read_text()
    found = _WRITTEN_FOR.search(notes)
    assert found is not None, f"{output.name}: the notes name no release"
    return None if found.group(2) else int(found.group(1))


def test_every_golden_output_is_checked():
    assert len(OUTPUTS) >= 10


@pytest.mark.parametrize("output", OUTPUTS, ids=[path.name for path in OUTPUTS])
def test_a_migrate_output_lints_clean_for_the_release_it_was_written_for(output: Path):
    release = _release(output)
    result = lint_text(output.name, output.read_text(), Settings(target=release))
    loud = [f"{f.rule} {f.severity} {f.message}" for f in result.findings if f.severity in ("error", "warning")]
    assert loud == [], f"{output.name} at {versions.render(release) if release else 'no release known'}"
