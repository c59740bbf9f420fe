"""Statements in: each format read from hand-written samples of real-world layout (a bank's
CAMT.053 v02, a SWIFT-enveloped MT940 with structured :86:, a BAI2 file with continuation
records and funds availability, a CSV), the format told from the content; amounts exact."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from recon.bank.reading import detect_format, read_statement_file
from recon.bank.statements import StatementError, to_minor

SAMPLES = Path(__file__).parent / "samples"


def test_camt053_sample_reads_balances_entries_and_parties() -> None:
    (st,) = read_statement_file(SAMPLES / "camt053_bank.xml")
    assert (st.format, st.account, st.currency) == ("camt053", "DE58123456780123456789", "EUR")
    assert (st.statement_date, st.opening_minor, st.closing_minor) == (
        date(2026, 11, 20),
        1_000_000,
        1_120_451,
    )
    credit, debit = st.lines
    assert (credit.number, credit.amount_minor, credit.counterparty) == (
        1,
        128_451,
        "SANDBOX PAYMENTS LTD",
    )
    assert "SETTLEMENT 2026-11-18 EUR" in credit.remittance
    assert (debit.number, debit.amount_minor, debit.counterparty) == (
        2,
        -8_000,
        "Stadtwerke Musterstadt",
    )


def test_mt940_sample_reads_each_statement_with_its_balances_and_line_numbers() -> None:
    first, second = read_statement_file(SAMPLES / "mt940_bank.sta")
    assert (first.account, first.currency, first.statement_date) == (
        "DE89370400440532013000",
        "EUR",
        date(2026, 11, 20),
    )
    assert (first.opening_minor, first.closing_minor) == (1_234_567, 1_359_557)
    assert [(ln.number, ln.amount_minor) for ln in first.lines] == [(6, 150_000), (8, -25_010)]
    assert first.lines[0].counterparty == "SANDBOX PAYMENTS LTD"
    assert second.opening_minor == first.closing_minor
    assert [(ln.number, ln.amount_minor) for ln in second.lines] == [(17, 4_200)]


def test_bai2_sample_reads_ledger_balances_and_signs_by_type_code() -> None:
    (st,) = read_statement_file(SAMPLES / "bai2_bank.bai")
    assert (st.format, st.account, st.currency, st.statement_date) == (
        "bai2",
        "0975312468",
        "USD",
        date(2026, 11, 20),
    )
    assert (st.opening_minor, st.closing_minor) == (500_000, 650_000)
    assert [(ln.number, ln.amount_minor) for ln in st.lines] == [(4, 150_000), (6, -25_000)]
    assert "SANDBOX PAYMENTS LTD" in st.lines[0].remittance


def test_bai2_with_a_wrong_control_total_is_refused(tmp_path: Path) -> None:
    text = (SAMPLES / "bai2_bank.bai").read_text().replace("49,1325000,5/", "49,1325001,5/")
    path = tmp_path / "edited.bai"
    path.write_text(text)
    with pytest.raises(StatementError, match=r"edited\.bai"):
        read_statement_file(path)


def test_csv_sample_is_one_statement_per_currency_exact_by_exponent() -> None:
    jpy, bhd = read_statement_file(SAMPLES / "statement_bank.csv")
    assert (jpy.currency, jpy.statement_date, jpy.opening_minor) == ("JPY", None, None)
    assert [(ln.number, ln.amount_minor) for ln in jpy.lines] == [(2, 125_000), (3, -3_300)]
    assert jpy.lines[1].value_date == date(2026, 11, 21)
    assert [(ln.number, ln.amount_minor) for ln in bhd.lines] == [(4, 12_345)]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("camt053_bank.xml", "camt053"),
        ("mt940_bank.sta", "mt940"),
        ("bai2_bank.bai", "bai2"),
        ("statement_bank.csv", "csv"),
    ],
)
def test_format_is_recognised_from_the_content_not_the_name(
    tmp_path: Path, name: str, kind: str
) -> None:
    text = (SAMPLES / name).read_text()
    assert detect_format(text) == kind
    renamed = tmp_path / "statement.txt"
    renamed.write_text(text)
    assert read_statement_file(renamed)[0].format == kind


def test_a_file_that_is_no_statement_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(StatementError, match=r"notes.txt: not a bank statement"):
        read_statement_file(path)


def test_an_xml_bomb_is_refused(tmp_path: Path) -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">'
        "<BkToCstmrStmt>&lol2;</BkToCstmrStmt></Document>"
    )
    path = tmp_path / "bomb.xml"
    path.write_text(bomb)
    with pytest.raises(StatementError, match="unsafe XML"):
        read_statement_file(path)


@pytest.mark.parametrize(
    ("text", "currency", "comma", "minor"),
    [
        ("1500.00", "EUR", False, 150_000),
        ("1500,5", "EUR", True, 150_050),
        ("1.234,56", "EUR", True, 123_456),
        ("12345", "JPY", False, 12_345),
        ("12345,", "JPY", True, 12_345),
        ("1.001", "BHD", False, 1_001),
        ("-0.10", "USD", False, -10),
    ],
)
def test_amounts_become_minor_units_exactly(
    text: str, currency: str, comma: bool, minor: int
) -> None:
    assert to_minor(text, currency, where="t", decimal_comma=comma) == minor


@pytest.mark.parametrize(("text", "currency"), [("1.5", "JPY"), ("1.0005", "BHD"), ("x", "EUR")])
def test_an_amount_finer_than_its_currency_is_refused_never_rounded(
    text: str, currency: str
) -> None:
    with pytest.raises(StatementError):
        to_minor(text, currency, where="t")


def test_camt053_pending_entries_are_not_booked_and_numbers_stay_ordinal(tmp_path: Path) -> None:
    text = (SAMPLES / "camt053_bank.xml").read_text()
    first_entry = text.index("<Sts>BOOK</Sts>")
    path = tmp_path / "pending.xml"
    path.write_text(text[:first_entry] + "<Sts>PDNG</Sts>" + text[first_entry + 15 :])
    (st,) = read_statement_file(path)
    assert [(ln.number, ln.amount_minor) for ln in st.lines] == [(2, -8_000)]
