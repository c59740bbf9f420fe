"""What was planted on purpose, and the finding of docs/architecture.md each must produce.

The truth's ``planted`` list: a test asserts that every item is among the oracle's findings.
"""

from __future__ import annotations

from dataclasses import dataclass

from recon.sandbox.records.anomalies import AnomalyPlan
from recon.sandbox.records.disputes import Disputes
from recon.sandbox.records.intents import Intents
from recon.sandbox.records.invoices import Invoices
from recon.sandbox.records.payments import Payments
from recon.sandbox.records.refunds import Refunds

__all__ = ["Planted", "list_planted"]


@dataclass(frozen=True, slots=True)
class Planted:
    """One anomaly planted on purpose, and the finding the oracle must produce for it."""

    kind: str
    check: str
    entity: str
    entity_id: str
    issue_type: str

    def as_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "check": self.check,
            "entity": self.entity,
            "entity_id": self.entity_id,
            "issue_type": self.issue_type,
        }


def list_planted(
    plan: AnomalyPlan,
    *,
    payments: Payments,
    refunds: Refunds,
    disputes: Disputes,
    invoices: Invoices,
    intents: Intents,
) -> list[Planted]:
    """What was planted on purpose, with the finding each must produce."""
    ks = plan.ks
    out: list[Planted] = []
    pay_checks: dict[str, list[tuple[str, str]]] = {
        "refunded_short": [("refunded_amount_mismatch", "refunded_short")],
        "refunded_over": [
            ("refunded_amount_mismatch", "refunded_over"),
            ("over_refunded", "over_refunded"),
        ],
        "partial_but_full": [("partially_refunded_out_of_range", "partial_but_full")],
        "partial_without_refund": [("partially_refunded_out_of_range", "partial_without_refund")],
        "partial_over": [
            ("partially_refunded_out_of_range", "partial_over"),
            ("over_refunded", "over_refunded"),
        ],
        "confirmed_with_refunds": [("confirmed_with_refunds", "confirmed_with_refunds")],
        "duplicate_reference": [("duplicate_payment_reference", "duplicate_reference")],
        "payment_negative_amount": [
            ("impossible_amounts", "negative_amount"),
            ("confirmed_with_refunds", "confirmed_with_refunds"),
            ("over_refunded", "over_refunded"),
        ],
        "payment_float_amount": [("impossible_amounts", "non_integer_amount")],
        "payment_string_amount": [("impossible_amounts", "non_integer_amount")],
        "payment_invalid_currency": [("impossible_amounts", "invalid_currency")],
        "payment_unknown_status": [("unknown_status", "unknown_status")],
        "payment_stuck_created": [("stuck_non_final", "stuck_created")],
        "payment_stuck_pending": [("stuck_non_final", "stuck_pending")],
        "refunded_mixed_case": [("refunded_amount_mismatch", "refunded_short")],
        "young_pending_refund": [("refund_in_flight", "refund_in_flight")],
        # currency_lower_case: no finding (the loader reads `eur` as EUR)
    }
    refund_checks: dict[str, tuple[str, str]] = {
        "refund_currency_mismatch": ("refund_currency_mismatch", "currency_mismatch"),
        "refund_unknown_payment": ("refund_unknown_payment", "unknown_payment"),
        "refund_unrefundable_state": (
            "refund_on_unrefundable_payment",
            "unrefundable_payment_state",
        ),
        "refund_negative_amount": ("impossible_amounts", "negative_amount"),
        "refund_non_integer_amount": ("impossible_amounts", "non_integer_amount"),
        "refund_invalid_currency": ("impossible_amounts", "invalid_currency"),
        "refund_unknown_status": ("unknown_status", "unknown_status"),
        "refund_stuck_pending": ("stuck_non_final", "stuck_pending"),
    }
    for i, kind in sorted(plan.pay_kind.items()):
        pid = payments.payment_id(i)
        for check, issue in pay_checks.get(kind, []):
            out.append(Planted(kind, check, "payment", pid, issue))
        if kind == "duplicate_reference":
            partner = plan.dup_of.get(i)
            if partner is not None:
                out.append(
                    Planted(
                        kind,
                        "duplicate_payment_reference",
                        "payment",
                        payments.payment_id(partner),
                        "duplicate_reference",
                    )
                )
        if kind == "refund_unrefundable_state":
            status = payments.plan_of(i).status
            if status in ("created", "pending"):  # old, so it is stuck as well
                out.append(Planted(kind, "stuck_non_final", "payment", pid, f"stuck_{status}"))
        if kind in refund_checks:
            check, issue = refund_checks[kind]
            # the planted refund is the last (newest) one of the payment
            rec = refunds.of_payment(i)[-1]
            out.append(Planted(kind, check, "refund", rec["id"], issue))
    # Clean recent payments whose refund is still pending are in flight too (info).
    for i in range(min(ks.n, 10_000)):
        if not ks.is_recent("payments", i):
            break
        if i not in plan.pay_kind and any(r[0] == "pending" for r in payments.plan_of(i).refunds):
            out.append(
                Planted(
                    "young_pending_refund",
                    "refund_in_flight",
                    "payment",
                    payments.payment_id(i),
                    "refund_in_flight",
                )
            )
    for d, kind in sorted(plan.dispute_kind.items()):
        did = ks.make_id("dp", d)
        if kind in ("dispute_on_refunded", "dispute_on_partially_refunded"):
            if disputes.payment_of(d) is not None:
                out.append(
                    Planted(
                        kind,
                        "dispute_on_refunded_payment",
                        "dispute",
                        did,
                        "dispute_on_refunded_payment",
                    )
                )
        elif kind == "dispute_negative_amount":
            out.append(Planted(kind, "impossible_amounts", "dispute", did, "negative_amount"))
        elif kind == "dispute_invalid_currency":
            out.append(Planted(kind, "impossible_amounts", "dispute", did, "invalid_currency"))
        elif kind == "dispute_unknown_status":
            out.append(Planted(kind, "unknown_status", "dispute", did, "unknown_status"))
    for s, kind in sorted(plan.sub_kind.items()):
        out.append(
            Planted(kind, "unknown_status", "subscription", ks.make_id("sub", s), "unknown_status")
        )
    for v in range(ks.sizes.invoices):
        ikind = plan.inv_kind.get(v)
        _, _, status = invoices.parts(v)
        vid = ks.make_id("in", v)
        if status == "open":
            bucket, _ = invoices.aging(v)
            out.append(Planted(ikind or "open_invoice", "open_invoices", "invoice", vid, bucket))
        if ikind == "invoice_inactive_subscription" and v in plan.inv_customer_override:
            out.append(
                Planted(
                    ikind,
                    "open_invoice_inactive_subscription",
                    "invoice",
                    vid,
                    "inactive_subscription",
                )
            )
        elif ikind in ("invoice_zero_amount", "invoice_negative_amount"):
            out.append(
                Planted(
                    ikind,
                    "open_invoice_nonpositive_amount",
                    "invoice",
                    vid,
                    "nonpositive_amount_due",
                )
            )
            if ikind == "invoice_negative_amount":
                out.append(Planted(ikind, "impossible_amounts", "invoice", vid, "negative_amount"))
        elif ikind == "invoice_non_integer_amount":
            out.append(Planted(ikind, "impossible_amounts", "invoice", vid, "non_integer_amount"))
        elif ikind == "invoice_invalid_currency":
            out.append(Planted(ikind, "impossible_amounts", "invoice", vid, "invalid_currency"))
        elif ikind == "invoice_unknown_status":
            out.append(Planted(ikind, "unknown_status", "invoice", vid, "unknown_status"))
    for k, kind in sorted(plan.intent_kind.items()):
        kid = ks.make_id("pi", k)
        rec = intents.record(k)
        if kind == "intent_negative_amount":
            out.append(
                Planted(kind, "impossible_amounts", "payment_intent", kid, "negative_amount")
            )
            out.append(
                Planted(kind, "intent_negative_amount", "payment_intent", kid, "negative_amount")
            )
        elif kind == "intent_non_integer_amount":
            out.append(
                Planted(kind, "impossible_amounts", "payment_intent", kid, "non_integer_amount")
            )
        elif kind == "intent_invalid_currency":
            out.append(
                Planted(kind, "impossible_amounts", "payment_intent", kid, "invalid_currency")
            )
        elif kind == "intent_stuck":
            out.append(
                Planted(kind, "stuck_non_final", "payment_intent", kid, f"stuck_{rec['status']}")
            )
        elif kind == "intent_unknown_status":
            out.append(Planted(kind, "unknown_status", "payment_intent", kid, "unknown_status"))
    return out
