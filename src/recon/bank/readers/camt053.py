"""CAMT.053 (ISO 20022 BankToCustomerStatement), any version `camt.053.001.xx`.

Read with the standard library's ElementTree through `defusedxml`, which refuses entity
expansion and external references (a statement is a file from outside: no XML bombs). The
namespaces differ between versions, so elements are found by their local names. pycamt was
judged and not taken: it flattens entries to dicts without the statement balances recon
chains, and adds nothing over ElementTree for the dozen elements read here.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from recon.bank.statements import Line, Statement, StatementError, to_minor

__all__ = ["read_camt053"]

_OPENING = ("OPBD", "PRCD")  # opening booked; previous closing booked
_CLOSING = ("CLBD",)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(el: Element, name: str) -> Iterator[Element]:
    return (c for c in el if _local(c.tag) == name)


def _child(el: Element | None, *path: str) -> Element | None:
    for name in path:
        if el is None:
            return None
        el = next(_children(el, name), None)
    return el


def _text(el: Element | None, *path: str) -> str:
    found = _child(el, *path) if path else el
    return (found.text or "").strip() if found is not None else ""


def _date(el: Element | None, where: str) -> date | None:
    """`<Dt>` or `<DtTm>` under `el` as a date."""
    text = _text(el, "Dt") or _text(el, "DtTm")[:10]
    if not text:
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise StatementError(f"{where}: {text!r} is not a date") from None


def _amount(el: Element, where: str) -> tuple[int, str]:
    amt = _child(el, "Amt")
    if amt is None:
        raise StatementError(f"{where}: no <Amt>")
    currency = (amt.get("Ccy") or "").strip().upper()
    minor = to_minor(amt.text or "", currency, where=where)
    if _text(el, "CdtDbtInd") == "DBIT":
        minor = -minor
    return minor, currency


def read_camt053(path: Path, data: bytes) -> list[Statement]:
    """Every `Stmt` of a CAMT.053 document; entries numbered 1, 2, … across the file."""
    try:
        root = SafeET.fromstring(data)
    except DefusedXmlException as exc:
        raise StatementError(f"{path}: refused: {type(exc).__name__} (unsafe XML)") from None
    except SafeET.ParseError as exc:
        raise StatementError(f"{path}: not well-formed XML: {exc}") from None
    body = _child(root, "BkToCstmrStmt")
    if body is None:
        raise StatementError(f"{path}: no BkToCstmrStmt: not a CAMT.053 statement")
    out: list[Statement] = []
    entry_no = 0
    for index, stmt in enumerate(_children(body, "Stmt"), start=1):
        where = f"{path.name}: statement {index}"
        acct = _child(stmt, "Acct")
        account = _text(acct, "Id", "IBAN") or _text(acct, "Id", "Othr", "Id")
        currency = _text(acct, "Ccy").upper()
        opening = closing = None
        closing_date: date | None = None
        for bal in _children(stmt, "Bal"):
            code = _text(bal, "Tp", "CdOrPrtry", "Cd")
            minor, bal_currency = _amount(bal, f"{where} balance {code}")
            currency = currency or bal_currency
            if code in _OPENING and opening is None:
                opening = minor
            elif code in _CLOSING:
                closing, closing_date = minor, _date(_child(bal, "Dt"), where)
        if closing_date is None:  # no CLBD: the period's end
            end = _text(stmt, "FrToDt", "ToDtTm")[:10]
            closing_date = date.fromisoformat(end) if end else None
        statement = Statement(
            path, "camt053", account, currency, closing_date, opening, closing, index
        )
        for entry in _children(stmt, "Ntry"):
            entry_no += 1
            status = _text(entry, "Sts") or _text(entry, "Sts", "Cd")
            if status in ("PDNG", "INFO"):  # not booked (yet): not on the account
                continue
            at = f"{path.name}: entry {entry_no}"
            minor, entry_currency = _amount(entry, at)
            if _text(entry, "RvslInd").lower() == "true":
                minor = -minor  # a reversal undoes its original: the other direction
            booked = _date(_child(entry, "BookgDt"), at)
            valued = _date(_child(entry, "ValDt"), at) or booked
            if booked is None or valued is None:
                raise StatementError(f"{at}: no booking date")
            statement.lines.append(
                Line(
                    entry_no,
                    booked,
                    valued,
                    minor,
                    entry_currency or currency,
                    _counterparty(entry, credit=minor > 0),
                    _remittance(entry),
                    _text(entry, "AcctSvcrRef") or _text(entry, "NtryRef"),
                )
            )
        out.append(statement)
    return out


def _counterparty(entry: Element, *, credit: bool) -> str:
    """The other party: the debtor of a credit, the creditor of a debit."""
    names = []
    for tx in _all(entry, "TxDtls"):
        parties = _child(tx, "RltdPties")
        side = "Dbtr" if credit else "Cdtr"
        # camt.053.001.02: Dbtr/Nm; .08 and later: Dbtr/Pty/Nm
        name = _text(parties, side, "Nm") or _text(parties, side, "Pty", "Nm")
        if name:
            names.append(name)
    return "; ".join(dict.fromkeys(names))


def _remittance(entry: Element) -> str:
    parts = [_text(entry, "AddtlNtryInf")]
    for tx in _all(entry, "TxDtls"):
        rmt = _child(tx, "RmtInf")
        if rmt is not None:
            parts += [(u.text or "").strip() for u in _children(rmt, "Ustrd")]
            for strd in _children(rmt, "Strd"):
                parts.append(_text(strd, "CdtrRefInf", "Ref"))
        parts.append(_text(tx, "AddtlTxInf"))
        parts.append(_text(tx, "Refs", "EndToEndId"))
    return " ".join(p for p in dict.fromkeys(parts) if p and p != "NOTPROVIDED")


def _all(el: Element, name: str) -> list[Element]:
    return [e for e in el.iter() if _local(e.tag) == name]
