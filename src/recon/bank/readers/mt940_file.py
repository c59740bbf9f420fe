"""MT940 (SWIFT customer statement), read with the `mt-940` package.

`mt-940` (BSD, kept since 2013) parses the tags, the `:61:` sub-fields, the dates and the
structured German `:86:` (`?20` purpose, `?32` name). It keeps one set of balances per
parse, so the file is cut into its statements (a `:20:` starts one) and each is parsed on
its own: the balances of every day are what `bank_statement_gap` chains. A line's number is
the physical line of its `:61:` in the file.
"""

from __future__ import annotations

import logging
import re
from datetime import date
from pathlib import Path
from typing import Any

import mt940

from recon.bank.statements import Line, Statement, StatementError, to_minor

__all__ = ["read_mt940"]

# mt-940 logs every regex miss at ERROR before it raises; recon says what failed, once.
logging.getLogger("mt940").setLevel(logging.CRITICAL)

_START = re.compile(r"^(?:\{[^}]*\})*(?:\{4:)?\s*:20:")


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each statement: from a `:20:` to the next."""
    blocks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _START.match(line):
            blocks.append((number, [":20:" + line.split(":20:", 1)[1]]))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _minor(value: Any, where: str) -> tuple[int, str]:
    amount = getattr(value, "amount", None)
    currency = str(getattr(value, "currency", "") or "").upper()
    if amount is None:
        raise StatementError(f"{where}: no amount")
    return to_minor(str(amount), currency, where=where), currency


def _balance(data: dict[str, Any], *names: str) -> tuple[int | None, str, date | None]:
    for name in names:
        bal = data.get(name)
        if bal is not None:
            minor, currency = _minor(bal.amount, name)
            return minor, currency, date(bal.date.year, bal.date.month, bal.date.day)
    return None, "", None


def read_mt940(path: Path, text: str) -> list[Statement]:
    """Every statement (`:20:` … `:62F:`) of an MT940 file."""
    out: list[Statement] = []
    for index, (start, lines) in enumerate(_blocks(text), start=1):
        where = f"{path.name}:{start}"
        body = "\n".join(ln for ln in lines if ln.strip() not in ("-", "-}"))
        parsed = mt940.models.Transactions()
        try:
            parsed.parse(body)
        except Exception as exc:  # the package raises many kinds on a malformed tag
            bad = next((a for a in reversed(exc.args) if isinstance(a, str)), "")
            line = next((start + i for i, ln in enumerate(lines) if bad and bad in ln), start)
            what = f": cannot read {bad[:60]!r}" if bad else ""
            raise StatementError(f"{path.name}:{line}: not a readable MT940 line{what}") from None
        data = parsed.data
        opening, currency, _ = _balance(
            data, "final_opening_balance", "intermediate_opening_balance"
        )
        closing, closing_currency, closing_date = _balance(
            data, "final_closing_balance", "intermediate_closing_balance"
        )
        currency = currency or closing_currency
        statement = Statement(
            path,
            "mt940",
            str(data.get("account_identification") or ""),
            currency,
            closing_date,
            opening,
            closing,
            start,
        )
        numbers = [start + i for i, ln in enumerate(lines) if ln.lstrip().startswith(":61:")]
        if len(numbers) != len(parsed.transactions):
            raise StatementError(f"{where}: {len(numbers)} :61: lines, {len(parsed)} read")
        for number, tx in zip(numbers, parsed.transactions, strict=True):
            d = tx.data
            at = f"{path.name}:{number}"
            minor, tx_currency = _minor(d.get("amount"), at)
            valued = d.get("date")
            booked = d.get("entry_date") or valued
            if valued is None or booked is None:
                raise StatementError(f"{at}: no value date")
            remittance = " ".join(
                str(d[k])
                for k in ("purpose", "transaction_details", "customer_reference", "extra_details")
                if d.get(k) and str(d[k]) != "NONREF"
            )
            statement.lines.append(
                Line(
                    number,
                    date(booked.year, booked.month, booked.day),
                    date(valued.year, valued.month, valued.day),
                    minor,
                    tx_currency or currency,
                    str(d.get("applicant_name") or ""),
                    remittance.replace("\n", " "),
                    str(d.get("bank_reference") or ""),
                )
            )
        if statement.statement_date is None:
            raise StatementError(f"{where}: statement {index} has no :62F: closing balance")
        out.append(statement)
    return out
