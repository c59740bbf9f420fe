"""Matching by hand that checks itself (issue 39): a payment in another currency or an amount
beyond the tolerance is refused unless --force (with its --note), a payment proposed for
another order is warned of, and `recon match accept` takes the unambiguous proposals by
filter, each applied at once."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from recon.cli import app
from recon.findings.acks import AckLog, acks_path

from .test_manual_match import Nights


def _match(nights: Nights, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["match", *args, "--db", str(nights.db)])
    return result.exit_code, result.stdout, result.stderr


def test_a_match_that_does_not_add_up_is_refused_unless_forced(tmp_path: Path) -> None:
    nights = Nights(tmp_path)
    nights.night()
    (case,) = [c for c in nights.books.cases if c["case"] == "no_reference"]
    order = case["order"]
    ((currency, amount),) = nights.query(
        "SELECT currency, amount_minor FROM ledger_orders WHERE coalesce(reference, order_id) = ?",
        [order],
    )
    other = str(
        nights.query(
            "SELECT id FROM payments WHERE currency = ? AND amount_minor <> ? "
            "AND gone_in_run IS NULL ORDER BY id LIMIT 1",
            [currency, amount],
        )[0][0]
    )
    code, _, err = _match(nights, order, other, "--note", "looks right")
    assert code == 2
    assert "beyond the tolerance" in err
    assert "not matched; to match them anyway: --force --note" in err
    assert not AckLog(acks_path(nights.db)).records(["match"])
    foreign = nights.query(
        "SELECT id, currency FROM payments WHERE currency <> ? AND gone_in_run IS NULL "
        "ORDER BY id LIMIT 1",
        [currency],
    )
    code, _, err = _match(nights, order, str(foreign[0][0]), "--note", "x")
    assert code == 2
    assert f"{foreign[0][0]} is in {foreign[0][1]}, order {order} in {currency}" in err
    code, out, err = _match(nights, order, other, "--note", "paid the other basket", "--force")
    assert code == 0, err
    assert f"matched {order} with {other} (forced: the payments sum to" in err + out
    (line,) = AckLog(acks_path(nights.db)).records(["match"])
    assert line["forced"]


def test_a_payment_proposed_for_another_order_is_warned_of(tmp_path: Path) -> None:
    nights = Nights(tmp_path)
    nights.night()
    ties = nights.query(
        "SELECT order_key, payment_id FROM ledger_suggestions WHERE rivals > 1 ORDER BY 1"
    )
    (order, payment), (rival, _) = ties[0], ties[1]
    code, out, err = _match(nights, str(order), str(payment), "--note", "the customer said so")
    assert code == 0, err
    assert f"warning: {payment} is proposed for another order, {rival}" in out + err


def test_match_accept_takes_the_unambiguous_proposals_by_filter(tmp_path: Path) -> None:
    nights = Nights(tmp_path)
    nights.night()
    proposals = nights.query(
        "SELECT s.order_key, o.currency FROM ledger_suggestions AS s JOIN ledger_orders AS o "
        "ON coalesce(o.reference, o.order_id) = s.order_key "
        "WHERE s.candidates = 1 AND s.rivals = 1 ORDER BY 1"
    )
    assert proposals
    currency = str(proposals[0][1])
    wanted = {str(o) for o, c in proposals if c == currency}
    code, out, err = _match(nights, "accept", "--currency", currency, "--note", "checked by Ann")
    assert code == 0, err
    assert f"accepted {len(wanted)} proposal(s)" in out + err
    matched = nights.query(
        "SELECT entity_id FROM ledger_matches WHERE rule = 'manual' AND state = 'matched'"
    )
    assert {str(r[0]) for r in matched} == wanted
    ties = [c["order"] for c in nights.books.cases if c["case"] == "tie"]
    assert not set(ties) & wanted  # a tie is never picked
    code, out, err = _match(nights, "accept", f"ledger_suggested_match:{ties[0]}:ambiguous",
                            "--note", "x")  # fmt: skip
    assert code == 1
    assert f"not matched: {ties[0]}: no unambiguous proposal" in out + err


def test_the_worklist_match_action_accepts_a_proposal_once(tmp_path: Path) -> None:
    import openpyxl

    nights = Nights(tmp_path)
    nights.night()
    (case,) = [c for c in nights.books.cases if c["case"] == "no_reference"]
    key = f"ledger_suggested_match:{case['order']}:suggested"
    out = tmp_path / "worklist.xlsx"
    result = CliRunner().invoke(app, ["findings", "export", str(out), "--db", str(nights.db)])
    assert result.exit_code == 0, result.output
    wb = openpyxl.load_workbook(out)
    ws = wb["Worklist"]
    header = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        if row[0].value == key:
            row[header.index("action")].value = "match"
            row[header.index("note")].value = "same customer, same day"
    wb.save(out)
    first = CliRunner().invoke(app, ["findings", "import", str(out), "--db", str(nights.db)])
    assert first.exit_code == 0, first.output
    assert f"matched {key}" in first.stdout
    assert nights.query("SELECT rule FROM ledger_matches WHERE entity_id = ?", [case["order"]]) == [
        ("manual",)
    ]
    again = CliRunner().invoke(app, ["findings", "import", str(out), "--db", str(nights.db)])
    assert again.exit_code == 0, again.output
    assert f"already applied (matched {key})" in again.stdout
    assert len(AckLog(acks_path(nights.db)).records(["match"])) == 1
