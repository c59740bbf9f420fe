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
from recon.api.models import (
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
from recon.api.pagination import (
    RESOURCES,
    FailedPage,
    IdScan,
    Page,
    PagingError,
    Scan,
    ScanReport,
)
from recon.api.ratelimit import SharedRateLimiter
from recon.api.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after

__all__ = [
    "PAYMENT_STATUSES",
    "RESOURCES",
    "RETRYABLE_STATUSES",
    "ApiClient",
    "ApiModel",
    "AsyncApiClient",
    "AsyncScan",
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
    "Page",
    "PagingError",
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
