"""A person's matches: `recon match ORDER PAYMENT… --note`, `recon match accept`,
`recon match undo ORDER…`.

Each is one line of the audit trail beside the warehouse (`<db stem>.acks.jsonl`, the same
append-only file as the acknowledgements, written through `AckLog.record`): who, when, the
note, the order and every payment with the amounts both sides had when matched. Every night
the load reads the latest line per order (`recon.ledger.loading`) and applies it as rule
`manual` (sql/matching/manual.sql) while the order and its payments are still there with those
amounts; otherwise it lapses (`ledger_manual_matches`, check `ledger_manual_match_lapsed`).

A match checks itself and takes effect at once:

- a payment in another currency than the order, or payments whose sum differs from the
  order's amount beyond the tolerance (`RECON_LEDGER_TOLERANCE_MINOR` / `_BPS`, as rule
  `amount_tolerance` applies it), is refused unless `force` (the line then says `forced`);
- a payment the matching proposed for another order is said (a warning, not a refusal);
- in the transaction that records its line in the published warehouse
  (recon.findings.trail_table), the order's links, its row of `ledger_matches`, the
  proposals naming either side and `ledger_manual_matches` are updated
  (sql/ledger/manual_now.sql), and the open ledger findings of either side are resolved by
  hand (reason `other`, the note saying with what), so `findings_current` shows it now.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon.errors import ConfigError
from recon.findings.acks import AckLog, NewEvent, amounts_of, who_acts
from recon.money.currency import format_minor, is_iso4217
from recon.warehouse.database import open_readonly
from recon.warehouse.sql import read_sql, sql_statements

__all__ = [
    "CheckedMatch",
    "MatchOutcome",
    "Tolerance",
    "accept_suggestions",
    "check_match",
    "match_order",
    "match_suggestion",
    "undo_matches",
]

_SUGGESTION = "ledger_suggested_match:"


@dataclass(frozen=True)
class Tolerance:
    """How far the payments' sum may be from the order's amount (as rule amount_tolerance)."""

    minor: int = 0
    bps: int = 0

    def limit(self, amount: int) -> int:
        return max(self.minor, abs(amount) * self.bps // 10_000)


@dataclass(frozen=True)
class MatchOutcome:
    """What one match did: its line, what it warned of, the findings it resolved."""

    line: dict[str, Any]
    warnings: tuple[str, ...] = ()
    resolved: tuple[str, ...] = field(default_factory=tuple)


def _note(note: str | None) -> str:
    if not note or not note.strip():
        raise ConfigError("--note", "must say why these belong together (kept in the audit trail)")
    return note.strip()


def _money(amount: int, currency: str | None) -> str:
    if currency and is_iso4217(currency):
        return format_minor(amount, currency)
    return f"{currency or '?'} {amount:,} (minor units)"


def _bound(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if f"${k}" in sql}


@dataclass(frozen=True)
class CheckedMatch:
    """A match checked against the published warehouse, not yet written: the line's fields,
    what it warns of, the findings of either side it resolves, the values it applies."""

    fields: dict[str, Any]
    warnings: tuple[str, ...]
    resolves: tuple[tuple[Any, ...], ...]  # finding_key, check_name, currency, amount, detail
    paid_minor: int
    run_id: str


def check_match(
    db: Path,
    order: str,
    payments: list[str],
    *,
    tolerance: Tolerance | None = None,
    force: bool = False,
) -> CheckedMatch:
    """Check a match of books order `order` (its reference, else its order_id) with
    `payments` (live payment ids) against the published warehouse: a ConfigError unless it
    holds (or `force`, and then the fields say `forced`). Nothing is written."""
    if not payments:
        raise ConfigError("PAYMENT", "name at least one payment id to match the order with")
    payments = list(dict.fromkeys(payments))
    con = open_readonly(db)
    try:
        rows = con.execute(
            read_sql("ledger/manual_check.sql"), {"order": order, "payments": payments}
        ).fetchall()
        findings = con.execute(
            read_sql("ledger/manual_findings.sql"), {"order": order, "payments": payments}
        ).fetchall()
        run = con.execute("SELECT any_value(run_id) FROM ledger_matches").fetchone()
    finally:
        con.close()
    books = next((r for r in rows if r[0] == "order"), None)
    if books is None:
        raise ConfigError("ORDER", f"{order} is no order of the books (reference or order_id)")
    found = {str(r[1]): (r[2], r[3]) for r in rows if r[0] == "payment"}
    missing = [p for p in payments if p not in found]
    if missing:
        raise ConfigError("PAYMENT", f"{', '.join(missing)}: no such live payment")
    amount, currency = int(books[2]), books[3]
    problems = [
        f"{p} is in {cur}, order {order} in {currency}"
        for p, (_, cur) in found.items()
        if cur != currency
    ]
    paid = sum(int(a) for a, _ in found.values() if a is not None)
    if not problems and abs(paid - amount) > (tolerance or Tolerance()).limit(amount):
        problems.append(
            f"the payments sum to {_money(paid, currency)}, order {order} is "
            f"{_money(amount, currency)} (a difference of {_money(paid - amount, currency)}, "
            f"beyond the tolerance of {_money((tolerance or Tolerance()).limit(amount), currency)})"
        )
    if problems and not force:
        raise ConfigError(
            "--force",
            f'{"; ".join(problems)}: not matched; to match them anyway: --force --note "why"',
        )
    warnings = tuple(
        f"{r[1]} is proposed for another order, {r[4]} (ledger_suggested_match:{r[4]})"
        for r in rows
        if r[0] == "proposed"
    )
    fields: dict[str, Any] = {
        "order": order,
        "order_amount_minor": amount,
        "currency": currency,
        "payments": {p: found[p][0] for p in payments},
    }
    if problems:
        fields["forced"] = problems
    run_id = run[0] if run and run[0] is not None else ""
    return CheckedMatch(fields, warnings, tuple(tuple(f) for f in findings), paid, str(run_id))


def match_order(
    db: Path,
    log: Path,
    order: str,
    payments: list[str],
    note: str | None,
    *,
    tolerance: Tolerance | None = None,
    force: bool = False,
    who: str | None = None,
    extra: dict[str, Any] | None = None,
) -> MatchOutcome:
    """Match books order `order` (its reference, else its order_id) with `payments` (live
    payment ids), checked against the published warehouse and applied to it at once; the
    audit line written, with `who` (else RECON_USER or the OS user) and the `extra` fields
    (an approved proposal's). See the module docstring."""
    text = _note(note)
    checked = check_match(db, order, payments, tolerance=tolerance, force=force)
    payments = list(checked.fields["payments"])
    resolves = [
        NewEvent(
            "resolve",
            str(f[0]),
            amounts_of(str(f[1]), f[2], f[3], f[4]),
            note=f"matched by hand with {', '.join(payments)}: {text}",
            reason="other",
        )
        for f in checked.resolves
    ]
    now = datetime.now(UTC)
    params = {
        "order": order,
        "payments": payments,
        "paid_minor": checked.paid_minor,
        "currency": checked.fields["currency"],
        "run_id": checked.run_id,
        "who": who or who_acts(),
        "matched_at": now,
        "note": text,
    }

    def apply(con: Any) -> None:
        for stmt in sql_statements(read_sql("ledger/manual_now.sql")):
            con.execute(stmt, _bound(stmt, params))

    fields = {**checked.fields, **(extra or {})}
    line = AckLog(log).record(
        "match", fields, note=text, who=who, at=now, also=resolves, apply=apply
    )
    return MatchOutcome(line, checked.warnings, tuple(e.finding_key for e in resolves))


def match_suggestion(
    db: Path,
    log: Path,
    key: str,
    note: str | None,
    *,
    tolerance: Tolerance | None = None,
    force: bool = False,
) -> MatchOutcome:
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
    return match_order(db, log, order, [str(rows[0][0])], note, tolerance=tolerance, force=force)


def accept_suggestions(
    db: Path,
    log: Path,
    note: str | None,
    *,
    keys: Sequence[str] = (),
    currency: str | None = None,
    tolerance: Tolerance | None = None,
    confirm: Callable[[int], None] | None = None,
) -> tuple[list[MatchOutcome], list[str]]:
    """Accept the unambiguous proposals of the latest run (one candidate, no rival order),
    those of finding `keys` if given, of `currency` if given: (the matches made, why the
    others named by key were not). Ambiguous proposals are never picked."""
    text = _note(note)
    con = open_readonly(db)
    try:
        sql = read_sql("ledger/accept_suggestions.sql")
        rows = con.execute(sql, {"currency": currency}).fetchall()
    finally:
        con.close()
    clear = {str(r[0]): str(r[1]) for r in rows}
    wanted = [k.removeprefix(_SUGGESTION).rpartition(":")[0] for k in keys] or sorted(clear)
    skipped = [f"{o}: no unambiguous proposal{f' in {currency}' if currency else ''}"
               for o in wanted if o not in clear]  # fmt: skip
    if confirm is not None:
        confirm(sum(o in clear for o in wanted))
    done: list[MatchOutcome] = []
    with AckLog(log).locked():  # one at a time, none slipping in between
        for order in wanted:
            if order in clear:
                try:
                    done.append(
                        match_order(db, log, order, [clear[order]], text, tolerance=tolerance)
                    )
                except ConfigError as exc:
                    skipped.append(f"{order}: {exc.problem}")
    return done, skipped


def undo_matches(log: Path, orders: list[str], note: str | None, *, who: str | None = None) -> int:
    """Undo the people's matches of `orders` (each must be matched by hand now); `who`
    acts (else RECON_USER or the OS user)."""
    text = _note(note)
    trail = AckLog(log)
    latest: dict[str, str] = {}
    for line in trail.records(["match", "unmatch"]):
        latest[str(line.get("order"))] = str(line["action"])
    unknown = [o for o in orders if latest.get(o) != "match"]
    if unknown:
        raise ConfigError("ORDER", f"{', '.join(unknown)}: not matched by hand")
    for order in orders:
        trail.record("unmatch", {"order": order}, note=text, who=who)
    return len(orders)
