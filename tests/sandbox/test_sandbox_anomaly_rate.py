"""The sandbox's anomaly rate (issue 38): a real first night has ~13% of its records carrying
a finding; by default the sandbox plants a few hundred of each kind at most."""

from __future__ import annotations

import pytest

from recon.sandbox.config import SandboxConfig
from recon.sandbox.data import Dataset


def test_the_default_plants_a_few_hundred_of_each_kind_at_most() -> None:
    data = Dataset(7, 1_000_000)
    assert data.per_kind == 500


def test_an_anomaly_rate_plants_that_share_of_the_records() -> None:
    n = 100_000
    data = Dataset(7, n, anomaly_rate=0.13)
    planted = data.planted()
    assert 0.11 * n <= len(planted) <= 0.15 * n
    assert len(Dataset(7, n).planted()) < 0.07 * n  # the default: far fewer


def test_an_anomaly_rate_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="anomaly"):
        SandboxConfig(payments=1000, anomaly_rate=0.9)
