"""`recon sandbox bank --out DIR`: the statements in each bank's format (or one), the truth."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from recon.bank.reading import read_statement_file
from recon.cli import app

runner = CliRunner()


def test_sandbox_bank_writes_four_formats_and_the_truth(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sandbox", "bank", "--out", str(tmp_path), "--payments", "500"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.glob("bank-*"))
    assert names == ["bank-bhd.sta", "bank-eur.xml", "bank-gbp.bai", "bank-jpy.csv", "bank-usd.sta"]
    formats = {p.name: read_statement_file(p)[0].format for p in tmp_path.glob("bank-*")}
    assert set(formats.values()) == {"camt053", "mt940", "bai2", "csv"}
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert len(truth["bank_settlement_missing"]) == 1
    assert len(truth["bank_unexpected_credit"]) == 2
    assert "RECON_BANK_STATEMENTS=" in result.output


def test_sandbox_bank_refuses_an_unknown_format(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sandbox", "bank", "--out", str(tmp_path), "--format", "ofx"])
    assert result.exit_code == 2
    assert "--format must be one of" in result.output
