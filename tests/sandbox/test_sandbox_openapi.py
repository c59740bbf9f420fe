"""Schemathesis against the in-process sandbox: responses keep to its OpenAPI document.

The data set is generated with anomalies off: the planted anomalies break the record
schemas on purpose. ``negative_data_rejection`` is excluded: the sandbox ignores unknown
query parameters (as real APIs do), which that check reads as accepting invalid input;
the invalid values of the parameters it does know are tested in test_sandbox_api.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection

from recon.sandbox.app import DEMO_API_KEY, DEMO_BEARER_TOKEN, SandboxConfig, create_app

pytestmark = pytest.mark.slow  # the OpenAPI fuzz: every operation, 8 examples each

APP = create_app(
    SandboxConfig(seed=3, payments=300, anchor=datetime(2026, 11, 20, tzinfo=UTC), anomalies=False)
)
schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", APP)
KEY = {"x-api-key": DEMO_API_KEY}
BEARER = {"Authorization": f"Bearer {DEMO_BEARER_TOKEN}"}
BEARER_PATHS = {"/api/v1/payments/{id}", "/api/v1/checkout-sessions/{id}/redirect"}


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_sandbox_keeps_to_its_openapi_document(case: schemathesis.Case) -> None:
    headers = BEARER if case.operation.path in BEARER_PATHS else KEY
    case.call_and_validate(headers=headers, excluded_checks=[negative_data_rejection])
