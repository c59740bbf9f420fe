"""recon's client for the Merchant Payments API: every operation, retried, logged, paged.

from recon.api import ApiClient, ClientConfig

with ApiClient(ClientConfig.from_settings(settings), on_attempt=log.append) as client:
    scan = client.scan("payments")
    for page in scan:
        land(page.records)
    scan.report.status  # 'complete' | 'incomplete' | 'unavailable'
"""

from recon.api.aio import AsyncApiClient, AsyncScan
from recon.api.client import ApiClient
from recon.api.config import PAYMENT_STATUSES, ClientConfig
from recon.api.ratelimit import SharedRateLimiter
from recon.api.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after
from recon.catalogue.models import (
    ApiModel,
    CallRecord,
    CheckoutSession,
    CheckoutSetting,
    Coupon,
    Dispute,
    Invoice,
    ListPage,
    Money,
    Payment,
    PaymentIntent,
    PaymentLink,
    PaymentList,
    PaymentMethod,
    Product,
    Refund,
    Subscription,
    TaxRate,
)
from recon.paging.idscan import IdScan
from recon.paging.paginators import BasePaginator, NextOffsetPaginator, OffsetPaginator
from recon.paging.scan import FailedPage, Page, Scan, ScanReport

__all__ = [
    "PAYMENT_STATUSES",
    "RETRYABLE_STATUSES",
    "ApiClient",
    "ApiModel",
    "AsyncApiClient",
    "AsyncScan",
    "BasePaginator",
    "CallRecord",
    "CheckoutSession",
    "CheckoutSetting",
    "ClientConfig",
    "Coupon",
    "Dispute",
    "FailedPage",
    "IdScan",
    "Invoice",
    "ListPage",
    "Money",
    "NextOffsetPaginator",
    "OffsetPaginator",
    "Page",
    "Payment",
    "PaymentIntent",
    "PaymentLink",
    "PaymentList",
    "PaymentMethod",
    "Product",
    "Refund",
    "RetryPolicy",
    "Scan",
    "ScanReport",
    "SharedRateLimiter",
    "Subscription",
    "TaxRate",
    "parse_retry_after",
]
