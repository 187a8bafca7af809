"""(a) The committed schemas are exactly what the generator writes today."""

from __future__ import annotations

import pytest

from desched import versions
from desched.policy import schema

from .cases import REGENERATE, SCHEMAS

OUTPUTS = schema.outputs()


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_committed_schema_is_up_to_date(name: str) -> None:
    path = SCHEMAS / name
    assert path.is_file(), f"{path} is missing: run `{REGENERATE}`"
    assert path.read_bytes() == OUTPUTS[name].encode("ascii"), f"{path} is out of date: run `{REGENERATE}`"


def test_no_stale_schema_is_committed() -> None:
    committed = {path.relative_to(SCHEMAS).as_posix() for path in SCHEMAS.glob("**/*.json")}
    stale = sorted(committed - set(OUTPUTS))
    assert not stale, f"{stale} are no longer generated: run `{REGENERATE}` (it removes them)"


def test_published_set() -> None:
    expected = {f"v0.{t}/deschedulerpolicy-v1alpha2.json" for t in range(versions.OLDEST, versions.NEWEST + 1)}
    expected |= {f"v0.{t}/deschedulerpolicy-v1alpha1.json" for t in range(versions.OLDEST, versions.V1ALPHA1_REMOVED)}
    expected.add("deschedulerpolicy-v1alpha2.json")
    assert set(OUTPUTS) == expected
    assert (
        OUTPUTS["deschedulerpolicy-v1alpha2.json"] == OUTPUTS[f"v0.{versions.NEWEST}/deschedulerpolicy-v1alpha2.json"]
    )


def test_readme_documents_the_modeline() -> None:
    readme = (SCHEMAS / "README.md").read_text(encoding="utf-8")
    assert "# yaml-language-server: $schema=" in readme
    assert REGENERATE in readme


def test_generation_is_deterministic() -> None:
    assert schema.outputs() == OUTPUTS
    for text in OUTPUTS.values():
        assert text.endswith("}\n") and text.isascii()


def test_main_writes_and_checks(tmp_path, capsys) -> None:
    out = tmp_path / "schemas"
    assert schema.main(["--out", str(out), "--check"]) == 1
    assert REGENERATE in capsys.readouterr().err
    (out / "v0.20").mkdir(parents=True)
    (out / "v0.20" / "deschedulerpolicy-v1alpha2.json").write_text("{}\n")
    assert schema.main(["--out", str(out)]) == 0
    assert not (out / "v0.20" / "deschedulerpolicy-v1alpha2.json").exists()
    written = {path.relative_to(out).as_posix(): path.read_text() for path in out.glob("**/*.json")}
    assert written == OUTPUTS
    assert schema.main(["--out", str(out), "--check"]) == 0
    (out / "deschedulerpolicy-v1alpha2.json").write_text("{}\n")
    assert schema.main(["--out", str(out), "--check"]) == 1


def test_committed_directory_passes_check() -> None:
    assert schema.main(["--out", str(SCHEMAS), "--check"]) == 0, f"run `{REGENERATE}`"
