"""The sandbox's statements written as a bank sends them: CAMT.053, MT940, BAI2 or CSV,
one file per currency (`bank-<cur>.<ext>`), and the ground truth of the bank checks."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from recon.money.currency import currency_exponent
from recon.sandbox.bank.plan import (
    FORMAT_OF,
    PROVIDER_MATCH,
    SANDBOX_BANK,
    BankPlan,
    DayStatement,
    plan_statements,
)
from recon.sandbox.data import Dataset

__all__ = ["EXTENSIONS", "bank_truth", "sandbox_bank", "statement_text", "write_statements"]

EXTENSIONS = {"camt053": "xml", "mt940": "sta", "bai2": "bai", "csv": "csv"}


def _major(amount: int, currency: str, *, comma: bool = False) -> str:
    exponent = currency_exponent(currency) or 0
    whole, part = divmod(abs(amount), 10**exponent)
    text = f"{whole}.{part:0{exponent}d}" if exponent else str(whole)
    text = text.replace(".", ",") if comma else text
    if comma and not exponent:
        text += ","
    return ("-" if amount < 0 and not comma else "") + text


def _camt(currency: str, days: list[DayStatement]) -> tuple[str, dict[str, int]]:
    numbers: dict[str, int] = {}
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">',
        "<BkToCstmrStmt><GrpHdr><MsgId>SANDBOX-CAMT</MsgId>"
        "<CreDtTm>2026-01-01T00:00:00</CreDtTm></GrpHdr>",
    ]
    entry = 0

    def bal(code: str, amount: int, day: date) -> str:
        ind = "CRDT" if amount >= 0 else "DBIT"
        return (
            f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>"
            f'<Amt Ccy="{currency}">{_major(abs(amount), currency)}</Amt>'
            f"<CdtDbtInd>{ind}</CdtDbtInd><Dt><Dt>{day.isoformat()}</Dt></Dt></Bal>"
        )

    for n, st in enumerate(days, start=1):
        out.append(
            f"<Stmt><Id>SBX-{currency}-{n}</Id><Acct><Id><Othr><Id>SANDBOX-{currency}</Id>"
            f"</Othr></Id><Ccy>{currency}</Ccy></Acct>"
        )
        out.append(bal("OPBD", st.opening, st.day))
        out.append(bal("CLBD", st.closing, st.day))
        for ln in st.lines:
            entry += 1
            numbers[ln.reference] = entry
            credit = ln.amount >= 0
            party = "Dbtr" if credit else "Cdtr"
            out.append(
                f'<Ntry><Amt Ccy="{currency}">{_major(abs(ln.amount), currency)}</Amt>'
                f"<CdtDbtInd>{'CRDT' if credit else 'DBIT'}</CdtDbtInd><Sts>BOOK</Sts>"
                f"<BookgDt><Dt>{ln.day.isoformat()}</Dt></BookgDt>"
                f"<ValDt><Dt>{ln.day.isoformat()}</Dt></ValDt>"
                f"<AcctSvcrRef>{escape(ln.reference)}</AcctSvcrRef><NtryDtls><TxDtls>"
                f"<RltdPties><{party}><Nm>{escape(ln.counterparty)}</Nm></{party}></RltdPties>"
                f"<RmtInf><Ustrd>{escape(ln.remittance)}</Ustrd></RmtInf>"
                "</TxDtls></NtryDtls></Ntry>"
            )
        out.append("</Stmt>")
    out.append("</BkToCstmrStmt></Document>")
    return "\n".join(out) + "\n", numbers


def _mt940(currency: str, days: list[DayStatement]) -> tuple[str, dict[str, int]]:
    numbers: dict[str, int] = {}
    out: list[str] = []

    def bal(tag: str, amount: int, day: date) -> str:
        sign = "C" if amount >= 0 else "D"
        return f":{tag}:{sign}{day:%y%m%d}{currency}{_major(abs(amount), currency, comma=True)}"

    for n, st in enumerate(days, start=1):
        out += [
            f":20:SBX{currency}{n:05d}",
            f":25:SANDBOX-{currency}",
            f":28C:{n:05d}/001",
            bal("60F", st.opening, st.day),
        ]
        for ln in st.lines:
            mark = "C" if ln.amount >= 0 else "D"
            amount = _major(abs(ln.amount), currency, comma=True)
            out.append(f":61:{ln.day:%y%m%d%m%d}{mark}{amount}NTRF{ln.reference[:16]}")
            numbers[ln.reference] = len(out)
            out.append(f":86:{ln.counterparty} {ln.remittance}")
        out += [bal("62F", st.closing, st.day), "-"]
    return "\n".join(out) + "\n", numbers


def _bai2(currency: str, days: list[DayStatement]) -> tuple[str, dict[str, int]]:
    numbers: dict[str, int] = {}
    out = ["01,SANDBOXBANK,MERCHANT,260101,0000,1,,,2/"]
    file_total = 0
    for st in days:
        group = [f"02,MERCHANT,SANDBOXBANK,1,{st.day:%y%m%d},2359,{currency},2/"]
        account = [f"03,SANDBOX-{currency},{currency},010,{st.opening},,,015,{st.closing},,/"]
        total = st.opening + st.closing
        for ln in st.lines:
            code = "165" if ln.amount >= 0 else "475"
            account.append(f"16,{code},{abs(ln.amount)},Z,{ln.reference},,/")
            numbers[ln.reference] = len(out) + len(group) + len(account)
            account.append(f"88,{ln.counterparty} {ln.remittance}")
            total += abs(ln.amount)
        account.append(f"49,{total},{len(account) + 1}/")
        group += account
        group.append(f"98,{total},1,{len(group) + 1}/")
        out += group
        file_total += total
    out.append(f"99,{file_total},{len(days)},{len(out) + 1}/")
    return "\n".join(out) + "\n", numbers


def _csv(currency: str, days: list[DayStatement]) -> tuple[str, dict[str, int]]:
    numbers: dict[str, int] = {}
    out = ["booking_date,value_date,amount,currency,counterparty,remittance"]
    for st in days:
        for ln in st.lines:
            out.append(
                f"{ln.day},{ln.day},{_major(ln.amount, currency)},{currency},"
                f"{ln.counterparty},{ln.remittance}"
            )
            numbers[ln.reference] = len(out)
    return "\n".join(out) + "\n", numbers


_WRITERS = {"camt053": _camt, "mt940": _mt940, "bai2": _bai2, "csv": _csv}


def statement_text(
    kind: str, currency: str, days: list[DayStatement]
) -> tuple[str, dict[str, int]]:
    """One account's statements in format `kind`, and each line's number by its reference."""
    return _WRITERS[kind](currency, days)


def write_statements(plan: BankPlan, folder: Path, fmt: str | None = None) -> dict[str, Any]:
    """Write one statement file per currency into `folder` (every currency in `fmt`, or each
    in its bank's format, FORMAT_OF); returns the ground truth (also `truth.json`)."""
    folder.mkdir(parents=True, exist_ok=True)
    truth: dict[str, list[str]] = {
        "bank_settlement_missing": [plan.missing],
        "bank_settlement_amount_mismatch": [plan.short],
        "bank_unexpected_credit": [],
        "bank_statement_gap": [],
    }
    files = []
    for currency, days in plan.days.items():
        kind = fmt or FORMAT_OF[currency]
        text, numbers = _WRITERS[kind](currency, days)
        name = f"bank-{currency.lower()}.{EXTENSIONS[kind]}"
        (folder / name).write_text(text, encoding="utf-8")
        files.append(name)
        for cur, ref in plan.unexpected:
            if cur == currency:
                truth["bank_unexpected_credit"].append(f"{name}:{numbers[ref]}")
        gap_currency, gap_day = plan.gap
        if currency == gap_currency and kind != "csv":
            truth["bank_statement_gap"].append(f"{gap_currency}:{gap_day.isoformat()}")
        elif currency == gap_currency:  # a CSV has no balances to chain: the day's credit
            truth["bank_settlement_missing"].append(plan.gap_settlement)  # is simply missing
    result = {"files": files, "provider_match": PROVIDER_MATCH, "bank": SANDBOX_BANK, **truth}
    (folder / "truth.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def bank_truth(plan: BankPlan, fmt: str | None = None) -> dict[str, list[str]]:
    """The findings the bank checks must produce over `plan` written in `fmt`."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        result = write_statements(plan, Path(tmp), fmt)
    return {k: v for k, v in result.items() if k.startswith("bank_")}


def sandbox_bank(
    seed: int, payments: int, folder: Path, anchor: datetime | None = None
) -> dict[str, Any]:
    """The demo's statements: written under `folder/sandbox-bank` for the sandbox `recon
    nightly --sandbox` starts; the overrides that point the run at them."""
    out = folder / "sandbox-bank"
    write_statements(plan_statements(Dataset(seed, payments, anchor)), out)
    return {
        "bank_statements": str(out / "bank-*"),
        "bank_provider_match": PROVIDER_MATCH,
        "bank": SANDBOX_BANK,
    }
