"""Reading a statement file: its format recognised from the content, then its reader
(`recon.bank.readers`), every one giving `recon.bank.statements`' one shape."""

from __future__ import annotations

from pathlib import Path

from recon.bank.statements import Statement, StatementError

__all__ = ["detect_format", "read_statement_file"]


def detect_format(text: str) -> str | None:
    """The statement format of `text` from its content (None: not one recon reads)."""
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    if head.startswith("<") and "camt.053" in head:
        return "camt053"
    if head.startswith("01,"):
        return "bai2"
    if ":20:" in head and (":60F:" in head or ":60M:" in head or ":25:" in head):
        return "mt940"
    first = head.splitlines()[0].lower() if head else ""
    if "booking_date" in first and "amount" in first:
        return "csv"
    return None


def read_statement_file(path: Path) -> list[Statement]:
    """Every statement in `path` (a StatementError names the file and what is wrong)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StatementError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # MT940 files are often ISO 8859-1
    kind = detect_format(text)
    if kind == "camt053":
        from recon.bank.readers.camt053 import read_camt053

        return read_camt053(path, data)
    if kind == "mt940":
        from recon.bank.readers.mt940_file import read_mt940

        return read_mt940(path, text)
    if kind == "bai2":
        from recon.bank.readers.bai2_file import read_bai2

        return read_bai2(path, text)
    if kind == "csv":
        from recon.bank.readers.csv_file import read_csv

        return read_csv(path, text)
    raise StatementError(
        f"{path}: not a bank statement recon reads (CAMT.053 XML, MT940, BAI2, or CSV with "
        "booking_date, value_date, amount, currency, counterparty, remittance)"
    )
