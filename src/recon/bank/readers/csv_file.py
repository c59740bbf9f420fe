"""CSV statements: `booking_date, value_date, amount, currency, counterparty, remittance`
(an `account` column is optional), amounts in major units with a decimal point, signed
(credits positive), dates ISO 8601. A CSV carries no balances: each currency of a file is
one statement without them, so no gap can be told from it. A line's number is its physical
line in the file (the header is line 1).
"""

from __future__ import annotations

import csv
import io
from datetime import date
from pathlib import Path

from recon.bank.statements import Line, Statement, StatementError, to_minor

__all__ = ["COLUMNS", "read_csv"]

COLUMNS = ("booking_date", "value_date", "amount", "currency", "counterparty", "remittance")


def _day(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise StatementError(f"{where}: {text!r} is not an ISO date (YYYY-MM-DD)") from None


def read_csv(path: Path, text: str) -> list[Statement]:
    """One statement per currency of the file, in the order the currencies first appear."""
    sample = text[:4096]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    header = [h.strip().lower() for h in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise StatementError(f"{path}: the CSV lacks column(s) {', '.join(missing)}")
    by_currency: dict[str, Statement] = {}
    for row in reader:
        number = reader.line_num
        where = f"{path.name}:{number}"
        if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue
        currency = (row["currency"] or "").strip().upper()
        booked = _day(row["booking_date"] or "", where)
        valued = _day(row["value_date"], where) if (row["value_date"] or "").strip() else booked
        account = (row.get("account") or "").strip()
        statement = by_currency.get(currency)
        if statement is None:
            statement = by_currency[currency] = Statement(
                path, "csv", account, currency, None, None, None, number
            )
        statement.lines.append(
            Line(
                number,
                booked,
                valued,
                to_minor(row["amount"] or "", currency, where=where),
                currency,
                (row["counterparty"] or "").strip(),
                (row["remittance"] or "").strip(),
                (row.get("reference") or "").strip(),
            )
        )
    return list(by_currency.values())
