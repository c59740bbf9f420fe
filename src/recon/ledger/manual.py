"""A person's matches: `recon match ORDER PAYMENT… --note`, `recon match undo ORDER…`.

Each is one line of the audit trail beside the warehouse (`<db stem>.acks.jsonl`, the same
append-only file as the acknowledgements, written through `AckLog.record`): who, when, the
note, the order and every payment with the amounts both sides had when matched. Every night
the load reads the latest line per order (`recon.ledger.loading`) and applies it as rule
`manual` (sql/matching/manual.sql) while the order and its payments are still there with those
amounts; otherwise it lapses (`ledger_manual_matches`, check `ledger_manual_match_lapsed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.database import open_readonly
from recon.errors import ConfigError
from recon.findings.acks import AckLog

__all__ = ["match_order", "match_suggestion", "undo_matches"]

_SUGGESTION = "ledger_suggested_match:"


def _note(note: str | None) -> str:
    if not note or not note.strip():
        raise ConfigError("--note", "must say why these belong together (kept in the audit trail)")
    return note.strip()


def match_order(
    db: Path, log: Path, order: str, payments: list[str], note: str | None
) -> dict[str, Any]:
    """Match books order `order` (its reference, else its order_id) with `payments` (live
    payment ids), read from the published warehouse; the audit line written."""
    text = _note(note)
    if not payments:
        raise ConfigError("PAYMENT", "name at least one payment id to match the order with")
    con = open_readonly(db)
    try:
        row = con.execute(
            "SELECT amount_minor, currency FROM ledger_orders "
            "WHERE coalesce(reference, order_id) = ?",
            [order],
        ).fetchone()
        if row is None:
            raise ConfigError("ORDER", f"{order} is no order of the books (reference or order_id)")
        found = dict(
            con.execute(
                "SELECT id, amount_minor FROM payments WHERE gone_in_run IS NULL "
                "AND list_contains(?, id)",
                [payments],
            ).fetchall()
        )
    finally:
        con.close()
    missing = [p for p in payments if p not in found]
    if missing:
        raise ConfigError("PAYMENT", f"{', '.join(missing)}: no such live payment")
    fields = {
        "order": order,
        "order_amount_minor": row[0],
        "currency": row[1],
        "payments": {p: found[p] for p in payments},
    }
    return AckLog(log).record("match", fields, note=text)


def match_suggestion(db: Path, log: Path, key: str, note: str | None) -> dict[str, Any]:
    """Accept the proposal of finding `key` (`ledger_suggested_match:ORDER:suggested`); an
    ambiguous one must be matched by naming the payment."""
    if not key.startswith(_SUGGESTION):
        raise ConfigError("ORDER", f"{key} is not a ledger_suggested_match finding key")
    order, _, issue = key.removeprefix(_SUGGESTION).rpartition(":")
    con = open_readonly(db)
    try:
        rows = con.execute(
            "SELECT payment_id, rivals FROM ledger_suggestions WHERE order_key = ? "
            "ORDER BY payment_id",
            [order],
        ).fetchall()
    finally:
        con.close()
    if not rows:
        raise ConfigError("ORDER", f"{key}: no proposal for {order} in the latest run")
    if len(rows) > 1 or rows[0][1] > 1 or issue == "ambiguous":
        ids = ", ".join(str(r[0]) for r in rows)
        raise ConfigError(
            "ORDER", f"{key} is ambiguous ({ids}): name the payment: recon match {order} PAYMENT"
        )
    return match_order(db, log, order, [str(rows[0][0])], note)


def undo_matches(log: Path, orders: list[str], note: str | None) -> int:
    """Undo the people's matches of `orders` (each must be matched by hand now)."""
    text = _note(note)
    trail = AckLog(log)
    latest: dict[str, str] = {}
    for line in trail.records(["match", "unmatch"]):
        latest[str(line.get("order"))] = str(line["action"])
    unknown = [o for o in orders if latest.get(o) != "match"]
    if unknown:
        raise ConfigError("ORDER", f"{', '.join(unknown)}: not matched by hand")
    for order in orders:
        trail.record("unmatch", {"order": order}, note=text)
    return len(orders)
