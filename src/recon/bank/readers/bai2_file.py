"""BAI2 (the US cash management balance reporting format), read with the `bai2` package.

`bai2` (MIT) parses the records, the continuations (`88`), the type codes (credit or debit)
and the availability of each detail, and checks the control totals and record counts of
every account, group and file (`check_integrity`): a truncated or edited file is refused,
never half read. Each account (`03`) of a group is one statement dated by the group's as-of
date, with its opening (`010`) and closing (`015`) ledger balances; BAI2 amounts are already
in minor units. A line's number is the physical line of its `16` record.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from bai2 import bai2
from bai2.constants import TypeCodeTransaction
from bai2.exceptions import IntegrityException, NotSupportedYetException, ParsingException

from recon.bank.statements import Line, Statement, StatementError

__all__ = ["read_bai2"]

_OPENING, _CLOSING = "010", "015"


def read_bai2(path: Path, text: str) -> list[Statement]:
    """Every account of every group of a BAI2 file, as one statement each."""
    lines = text.splitlines()
    details = [n for n, ln in enumerate(lines, start=1) if ln.lstrip().startswith("16,")]
    starts = [n for n, ln in enumerate(lines, start=1) if ln.lstrip().startswith("03,")]
    try:
        parsed: Any = bai2.parse_from_string(text, check_integrity=True)
    except (
        IntegrityException,
        NotSupportedYetException,
        ParsingException,
        ValueError,
        IndexError,
        KeyError,
    ) as exc:
        raise StatementError(f"{path}: not a readable BAI2 file: {exc}") from None
    out: list[Statement] = []
    detail_at = iter(details)
    start_at = iter(starts)
    for group in parsed.children:
        as_of: date = group.header.as_of_date
        group_currency = str(group.header.currency or "USD").upper()
        for account in group.children:
            head = account.header
            currency = str(head.currency or group_currency).upper()
            balances = {str(s.type_code.code): s.amount for s in head.summary_items}
            statement = Statement(
                path,
                "bai2",
                str(head.customer_account_number or ""),
                currency,
                as_of,
                _int(balances.get(_OPENING)),
                _int(balances.get(_CLOSING)),
                next(start_at, 0),
            )
            for detail in account.children:
                number = next(detail_at, 0)
                amount = int(detail.amount or 0)
                kind = detail.type_code.transaction
                if kind == TypeCodeTransaction.debit:
                    amount = -amount
                elif kind != TypeCodeTransaction.credit:
                    continue  # a status or summary code on a detail record: not a booking
                statement.lines.append(
                    Line(
                        number,
                        as_of,
                        as_of,
                        amount,
                        currency,
                        "",
                        str(detail.text or "").strip(" ,/"),
                        str(detail.bank_reference or detail.customer_reference or ""),
                    )
                )
            out.append(statement)
    return out


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
