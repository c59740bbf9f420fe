"""`recon findings export` honours RECON_EXPORT_ROOT as `recon export` does (issue 38,
point 4): outside the folder refused with one line, exit 2; inside written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from recon.cli import app


def test_findings_export_stays_inside_recon_export_root(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    monkeypatch.setenv("RECON_EXPORT_ROOT", str(root))
    outside = tmp_path / "elsewhere.xlsx"
    result = CliRunner().invoke(app, ["findings", "export", str(outside), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "outside the folder exports may write to" in result.stderr
    assert "Traceback" not in result.output
    assert not outside.exists()
    escape = CliRunner().invoke(app, ["findings", "export", "../up.xlsx", "--db", str(db)])
    assert escape.exit_code == 2, escape.output
    assert not (tmp_path / "up.xlsx").exists()
    inside = CliRunner().invoke(app, ["findings", "export", "work.xlsx", "--db", str(db)])
    assert inside.exit_code == 0, inside.output
    assert (root / "work.xlsx").is_file()
