"""Closing a period: `recon close YYYY-MM` writes `reports/close-YYYY-MM/` (close.xlsx and
close.html) from the published warehouse and the audit trail.

recon.close.period  the figures: runs, roll-forward, open and resolved findings, activity
recon.close.pack    the pack: close.xlsx, close.html; sign-off, freezing and reopening
"""

from recon.close.pack import ClosedError, SignOff, close_period, period_status
from recon.close.period import Period, PeriodFigures, compute_period, parse_period

__all__ = [
    "ClosedError",
    "Period",
    "PeriodFigures",
    "SignOff",
    "close_period",
    "compute_period",
    "parse_period",
    "period_status",
]
