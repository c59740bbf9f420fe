"""Settings of the bank leg: what is refused before the night starts, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.bank.loading import read_statements, statement_files, validate_bank
from recon.config.settings import settings_from
from recon.errors import ConfigError

SAMPLES = Path(__file__).parent / "samples"


def test_statements_without_a_provider_match_are_refused() -> None:
    settings = settings_from(bank_statements=str(SAMPLES / "*.csv"))
    with pytest.raises(ConfigError, match="RECON_BANK_PROVIDER_MATCH"):
        validate_bank(settings)


def test_a_glob_that_names_no_file_is_refused(tmp_path: Path) -> None:
    settings = settings_from(bank_statements=str(tmp_path / "*.sta"), bank_provider_match="x")
    with pytest.raises(ConfigError, match="names no file"):
        validate_bank(settings)


def test_a_bad_regex_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="RECON_BANK_PROVIDER_MATCH"):
        settings_from(bank_provider_match="payments(")


@pytest.mark.parametrize(
    "bank",
    [{"fees": {"euro": {"fee_bps": 1}}}, {"calendar": "Atlantis"}, {"settlement_days": -1}],
)
def test_a_bad_bank_table_is_a_config_error(bank: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        settings_from(bank=bank)


def test_an_unreadable_statement_is_one_config_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.sta"
    bad.write_text(":20:X\n:25:ACC\n:60F:C261120EUR1,00\n:61:garbage\n")
    with pytest.raises(ConfigError, match=r"broken\.sta:4: not a readable MT940 line: cannot read"):
        read_statements(statement_files(str(tmp_path / "*.sta")))
    settings = settings_from(bank_statements=str(bad), bank_provider_match="x")
    with pytest.raises(ConfigError, match=r"broken\.sta:4"):
        validate_bank(settings)  # the preflight: before a single request


def test_a_statement_in_two_files_is_kept_once(tmp_path: Path) -> None:
    for name in ("a.sta", "b.sta"):
        (tmp_path / name).write_bytes((SAMPLES / "mt940_bank.sta").read_bytes())
    statements, duplicates = read_statements(statement_files(str(tmp_path / "*.sta")))
    assert (len(statements), duplicates) == (2, 2)
