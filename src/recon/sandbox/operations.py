"""The catalogue of operations served: method, path, number in the spec, auth, handler."""

from __future__ import annotations

from dataclasses import dataclass

from recon.sandbox import lists
from recon.sandbox import objects as o
from recon.sandbox.auth import Scheme
from recon.sandbox.refunding import create_refund
from recon.sandbox.state import Handler

__all__ = ["OPERATIONS", "PREFIX", "Operation"]

PREFIX = "/api/v1"


@dataclass(frozen=True)
class Operation:
    """One operation of the API (number 0: a list the spec does not show, assumed by recon)."""

    number: int
    name: str
    auth: Scheme
    handler: Handler
    create: bool = False
    list_resource: str | None = None


def _op(number: int, name: str, handler: Handler, auth: Scheme = "K") -> Operation:
    return Operation(number, name, auth, handler)


def _create(number: int, name: str, handler: Handler) -> Operation:
    return Operation(number, name, "K", handler, create=True)


def _list(number: int, name: str, resource: str, handler: Handler | None = None) -> Operation:
    return Operation(number, name, "K", handler or lists.list_of(resource), False, resource)


#: (method, path under PREFIX, operation), in the spec's order.
OPERATIONS: tuple[tuple[str, str, Operation], ...] = (
    (
        "POST",
        "/checkout-settings",
        _create(1, "create_checkout_setting", o.create_checkout_setting),
    ),
    (
        "PATCH",
        "/checkout-settings/{id}",
        _op(2, "update_checkout_setting", o.update_checkout_setting),
    ),
    ("POST", "/checkout-sessions/{id}/redirect", _op(3, "redirect", o.redirect_session, "B")),
    ("POST", "/checkout-sessions/{id}/expire", _op(4, "expire", o.expire_session)),
    ("GET", "/payments", _list(5, "list_payments", "payments", lists.list_payments)),
    ("GET", "/payments/{id}", _op(6, "get_payment", o.get_payment, "B")),
    ("GET", "/payment-intents", _list(7, "list_payment_intents", "payment_intents")),
    ("POST", "/refunds", _create(8, "create_refund", create_refund)),
    ("GET", "/refunds", _list(0, "list_refunds", "refunds", lists.list_refunds)),
    ("GET", "/disputes", _list(9, "list_disputes", "disputes")),
    ("GET", "/payment-links/{id}", _op(10, "get_payment_link", o.get_payment_link)),
    ("POST", "/payment-links/{id}/deactivate", _op(11, "deactivate", o.deactivate_payment_link)),
    (
        "GET",
        "/customers/{id}/payment-methods",
        _op(12, "payment_methods", lists.list_customer_payment_methods),
    ),
    ("GET", "/subscriptions", _list(13, "list_subscriptions", "subscriptions")),
    ("GET", "/subscriptions/{id}", _op(14, "get_subscription", o.get_subscription)),
    ("PATCH", "/subscriptions/{id}", _op(15, "update_subscription", o.update_subscription)),
    ("GET", "/invoices/{id}", _op(16, "get_invoice", o.get_invoice)),
    ("GET", "/invoices", _list(0, "list_invoices", "invoices", lists.list_invoices)),
    ("PATCH", "/products/{id}", _op(18, "update_product", o.update_product)),
    ("POST", "/coupons", _create(19, "create_coupon", o.create_coupon)),
    ("PATCH", "/coupons/{id}", _op(20, "update_coupon", o.update_coupon)),
    ("POST", "/tax-rates", _create(21, "create_tax_rate", o.create_tax_rate)),
    ("DELETE", "/webhook-endpoints/{id}", _op(22, "delete_webhook", o.delete_webhook)),
)
