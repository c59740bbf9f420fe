"""Alerts: one short message per run to `RECON_NOTIFY_URL` (a Slack-compatible webhook).

The message says how the run ended (status, exit code, the first reason), how many new
findings there are by severity, which API calls failed for good (with the request ids to
quote to the provider), and where the report is. `RECON_NOTIFY_ON` says which nights alert:
`always` (the default), `failure` (a night that is not a clean exit 0), `findings` (those,
and a night with new findings). It is posted as JSON `{"text": …}`, which a Slack incoming
webhook shows as is and any other HTTP endpoint can read.

Sending never fails the run and never holds it up for long: a few attempts with jittered
exponential backoff (tenacity), each bounded, all within `RECON_NOTIFY_BUDGET_S`; a refusal
(4xx other than 429) is not retried. The URL is a secret (a webhook's path is its
credential): it is read from the settings here, never passed as an argument (Prefect stores
those), and never written to a log line, an exception or the outcome.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from recon.errors import scrub
from recon.night.outcome import RunSummary

if TYPE_CHECKING:
    import httpx

    from recon.report.data import FailedCall


__all__ = ["SEVERITIES", "Alert", "Delivery", "alert_for", "first_reason", "send", "wanted"]

log = logging.getLogger("recon.night.notify")

_SHOWN_CALLS = 20  # a page narrowed to one record fails ~log2(page size) + 1 calls
_USER_AGENT = "recon-alerts"


SEVERITIES = ("error", "warn", "info")


def first_reason(reason: str | None) -> tuple[str | None, int]:
    """The first of a run's reasons (`a (x; y); b` holds two), and how many more there are."""
    if not reason:
        return None, 0
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(reason):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and reason.startswith("; ", i):
            parts.append(reason[start:i])
            start = i + 2
    parts.append(reason[start:])
    parts = [p.strip() for p in parts if p.strip()]
    return (parts[0], len(parts) - 1) if parts else (None, 0)


@dataclass(frozen=True)
class Alert:
    """What one run's alert says (no secret in it: it is built from the warehouse)."""

    run_id: str
    status: str
    exit_code: int
    reason: str | None = None
    failed_calls: Sequence[FailedCall] = ()
    # new (or reopened) findings by severity; None: the checks did not run (an aborted run)
    new_findings: Mapping[str, int] | None = None
    report: Path | None = None
    account: str | None = None
    trail_head: Mapping[str, Any] | None = None  # the audit trail's head (recon findings verify)

    def text(self) -> str:
        """The message: a headline with the first reason, then one line per fact."""
        of = f" (account {self.account})" if self.account else ""
        head = f"recon run {self.run_id}{of}: {self.status} (exit {self.exit_code})"
        first, more = first_reason(self.reason)
        if first:
            head += f": {first}" + (f" (and {more} more)" if more else "")
        lines = [head]
        if self.new_findings is not None:
            counts = ", ".join(f"{self.new_findings.get(s, 0)} {s}" for s in SEVERITIES)
            lines.append(f"new findings: {counts}")
        if self.failed_calls:
            later = " (fetched again later)" if self.status == "complete" else ""
            lines.append(f"failed calls{later}: {len(self.failed_calls)}")
            for call in self.failed_calls[:_SHOWN_CALLS]:
                query = f"?{call.query}" if call.query else ""
                ids = ", ".join(call.request_ids or ([call.request_id] if call.request_id else []))
                lines.append(
                    f"  {call.method} {call.path}{query} -> {call.http_status or call.error}"
                    f" (request ids: {ids or 'none given'})"
                )
            if len(self.failed_calls) > _SHOWN_CALLS:
                lines.append(f"  … and {len(self.failed_calls) - _SHOWN_CALLS} more")
        if self.report is not None:
            lines.append(f"report: {self.report}")
        if self.trail_head:
            lines.append(
                f"audit trail: {self.trail_head['lines']} line(s), head {self.trail_head['head']}"
            )
        return scrub("\n".join(lines))

    def payload(self) -> dict[str, Any]:
        return {"text": self.text()}

    @property
    def new_count(self) -> int:
        """New findings of every severity."""
        return sum((self.new_findings or {}).values())


def wanted(notify_on: str, *, exit_code: int, new_findings: int | None = None) -> bool:
    """Whether RECON_NOTIFY_ON asks for this night's alert: `always`; `failure` when the
    night is not a clean exit 0 (incomplete, aborted, a bad setting, --fail-on); `findings`
    for those and for a night with new findings (None: not known yet, so yes)."""
    if notify_on == "always" or exit_code != 0:
        return True
    return notify_on == "findings" and (new_findings is None or new_findings > 0)


def alert_for(summary: RunSummary) -> Alert:
    """The alert of a reported run, read from the published warehouse."""
    from recon.findings.trail_table import trail_head
    from recon.report.data import failed_calls
    from recon.warehouse.database import open_readonly
    from recon.warehouse.sql import read_sql

    con = open_readonly(summary.db_path)
    try:
        calls = failed_calls(con, summary.run_id)
        rows = con.execute(read_sql("report/new_findings_by_severity.sql"), [summary.run_id])
        new = {str(severity): int(n) for severity, n in rows.fetchall()}
        head = trail_head(con)  # written down off the machine: recon findings verify's anchor
    finally:
        con.close()
    report = (summary.report_dir / "report.html").resolve() if summary.report_dir else None
    return Alert(
        summary.run_id,
        summary.status,
        summary.exit_code,
        summary.reason,
        calls,
        new,
        report,
        summary.account,
        head,
    )


@dataclass(frozen=True)
class Delivery:
    """How sending went: `sent`, and in words (never the URL)."""

    sent: bool
    attempts: int
    detail: str


class _HideUrl(logging.Filter):
    """Drops log records that would show the webhook URL (httpx logs request URLs)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        return self.secret not in record.getMessage()


class _Retryable(Exception):
    """An answer worth another attempt (429, 5xx) or no answer at all."""


def send(
    url: SecretStr,
    alert: Alert,
    *,
    budget_s: float = 20.0,
    attempts: int = 4,
    attempt_timeout_s: float = 5.0,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Delivery:
    """Post `alert` to `url`; retried, bounded by `budget_s`; never raises."""
    # imported here: a process that sends no alert (the group night's own, each account's
    # until its night ends) does not pay for httpx and tenacity (and tenacity's asyncio)
    import httpx
    from tenacity import (
        RetryError,
        Retrying,
        retry_if_exception_type,
        stop_after_attempt,
        stop_before_delay,
        wait_exponential_jitter,
    )

    from recon.config.settings import checked_notify_url

    try:
        checked_notify_url(url)
    except ValueError:  # not a URL: nothing to try, four times or once
        refused = Delivery(False, 0, "not sent: RECON_NOTIFY_URL is not an http(s) URL")
        log.warning("alert for run %s: %s", alert.run_id, refused.detail)
        return refused
    deadline = clock() + budget_s
    tries = 0

    def once(client: httpx.Client) -> Delivery:
        nonlocal tries
        tries += 1
        remaining = deadline - clock()
        if remaining <= 0:
            raise _Retryable("no time left")
        try:
            response = client.post(
                url.get_secret_value(),
                json=alert.payload(),
                timeout=min(attempt_timeout_s, remaining),
            )
        except httpx.HTTPError as exc:  # its text may hold the URL: only its kind is kept
            raise _Retryable(type(exc).__name__) from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}")
        if status >= 400:
            return Delivery(False, tries, f"refused with HTTP {status} (not retried)")
        return Delivery(True, tries, f"HTTP {status}")

    retrying = Retrying(
        stop=stop_after_attempt(attempts) | stop_before_delay(budget_s),
        wait=wait_exponential_jitter(multiplier=0.5, max=4.0, jitter=0.5),
        retry=retry_if_exception_type(_Retryable),
        sleep=sleep,
        reraise=False,
        before_sleep=lambda state: log.info(
            "alert: attempt %d failed (%s); trying again",
            state.attempt_number,
            state.outcome.exception() if state.outcome else "?",
        ),
    )
    hide = _HideUrl(url.get_secret_value())
    httpx_log = logging.getLogger("httpx")  # it logs every request's URL at INFO
    httpx_log.addFilter(hide)
    try:
        with httpx.Client(
            transport=transport, follow_redirects=False, headers={"User-Agent": _USER_AGENT}
        ) as client:
            delivery: Delivery = retrying(once, client)
    except RetryError as exc:
        last = exc.last_attempt.exception() if exc.last_attempt else None
        delivery = Delivery(False, tries, f"gave up after {tries} attempt(s): {last}")
    except Exception as exc:  # never fail a run for its alert
        delivery = Delivery(False, tries, f"not sent: {type(exc).__name__}")
    finally:
        httpx_log.removeFilter(hide)
    level = logging.INFO if delivery.sent else logging.WARNING
    log.log(level, "alert for run %s: %s", alert.run_id, delivery.detail)
    return delivery
