"""Alerts: one short message per run to RECON_NOTIFY_URL; retried, bounded, never failing
the run, never showing the URL (a secret)."""

from __future__ import annotations

import logging
from pathlib import Path

import duckdb
import httpx
import pytest
from pydantic import SecretStr

from recon.night import nightly as steps
from recon.night.notify import Alert, send
from recon.report.data import FailedCall

from .conftest import KEY, overrides_for, sandbox, webhook

URL = SecretStr("https://hooks.example.test/services/T1/B2/very-secret-token")
SECRET = "very-secret-token"


def _call(rid: str) -> FailedCall:
    return FailedCall(
        resource="disputes",
        method="GET",
        path="/api/v1/disputes",
        query="max_records=200&skip=0",
        http_status=500,
        error="internal_error",
        message="boom",
        request_id=rid,
        request_ids=[f"{rid}-1", rid],
        attempts=2,
        attempted_at="2026-11-23T02:00:00Z",
    )


ALERT = Alert(
    "20261123T020000Z-abcdef",
    "incomplete",
    3,
    "disputes incomplete (1 page(s) failed for good)",
    [_call("req_1"), *(_call(f"req_x{i}") for i in range(21))],
    {"error": 2, "warn": 5},
    Path("/srv/recon/reports/20261123T020000Z-abcdef/report.html"),
)


def test_the_message_says_status_failed_calls_new_findings_and_the_report() -> None:
    text = ALERT.text()
    lines = text.splitlines()
    assert lines[0] == (
        "recon run 20261123T020000Z-abcdef: incomplete (exit 3): "
        "disputes incomplete (1 page(s) failed for good)"
    )
    assert "new findings: 2 error, 5 warn, 0 info" in lines  # by severity
    assert "failed calls: 22" in lines
    assert (
        "  GET /api/v1/disputes?max_records=200&skip=0 -> 500 (request ids: req_1-1, req_1)"
        in lines
    )
    assert "  … and 2 more" in lines  # short: twenty calls shown
    assert lines[-1] == "report: /srv/recon/reports/20261123T020000Z-abcdef/report.html"
    assert ALERT.payload() == {"text": text}  # what a Slack incoming webhook shows


def _sender(statuses: list[int | Exception]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = statuses.pop(0) if statuses else 200
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, text="ok")

    return httpx.MockTransport(handler), seen


def test_a_failing_hook_is_tried_again_with_backoff_then_delivered() -> None:
    transport, seen = _sender([503, httpx.ConnectError("refused"), 200])
    pauses: list[float] = []
    done = send(URL, ALERT, transport=transport, sleep=pauses.append)
    assert (done.sent, done.attempts, done.detail) == (True, 3, "HTTP 200")
    assert len(seen) == 3
    assert len(pauses) == 2
    assert all(0 < p <= 4.5 for p in pauses)
    assert seen[0].headers["content-type"] == "application/json"


def test_a_refusal_is_not_retried() -> None:
    transport, seen = _sender([404])
    done = send(URL, ALERT, transport=transport, sleep=pytest.fail)
    assert (done.sent, done.attempts) == (False, 1)
    assert len(seen) == 1


def test_it_gives_up_after_its_attempts_and_never_raises_nor_logs_the_url(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    transport, seen = _sender([httpx.ConnectError(f"cannot reach {URL.get_secret_value()}")] * 9)
    done = send(URL, ALERT, transport=transport, sleep=lambda _s: None, attempts=4)
    assert (done.sent, done.attempts, len(seen)) == (False, 4, 4)
    assert "gave up after 4 attempt(s)" in done.detail
    assert SECRET not in done.detail
    assert SECRET not in caplog.text
    assert "alert for run 20261123T020000Z-abcdef" in caplog.text


def test_the_time_budget_bounds_the_attempts() -> None:
    now = [0.0]
    transport, seen = _sender([500] * 9)

    def sleep(s: float) -> None:
        now[0] += s

    def slow_clock() -> float:
        now[0] += 1.0  # every look at the clock: a second passes
        return now[0]

    done = send(URL, ALERT, transport=transport, sleep=sleep, clock=slow_clock, budget_s=2.5)
    assert not done.sent
    assert len(seen) < 4  # stopped by the budget, not by the attempt count


@pytest.mark.integration
@pytest.mark.slow  # a full nightly against the sandbox
def test_a_run_sends_one_alert_to_a_real_webhook_with_its_failed_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with webhook(statuses=[503]) as hook, sandbox(seed=5, payments=800) as url:
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        httpx.post(
            f"{url}/_sandbox/faults", json={"poison": ["disputes:2"]}, headers={"x-api-key": KEY}
        ).raise_for_status()
        over = overrides_for(tmp_path, url)
        summary = steps.run_local(over)
    assert summary.status == "incomplete"
    assert len(hook.paths) == 2  # a 503 first, then delivered: one message
    assert len(hook.received) == 1
    text = hook.received[0]["text"]
    assert text.startswith(f"recon run {summary.run_id}: incomplete (exit 3)")
    con = duckdb.connect(over["db"], read_only=True)
    rids = [r[0] for r in con.execute("SELECT request_id FROM failed_calls").fetchall()]
    con.close()
    assert rids
    assert all(rid in text for rid in rids)
    assert "new findings: " in text
    report = (tmp_path / "reports" / summary.run_id / "report.html").resolve()
    assert f"report: {report}" in text
    # the URL is a secret: in no log line, no warehouse, no report, no landing
    secret = "s3cr3t"
    assert secret not in caplog.text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.integration
@pytest.mark.slow  # a full nightly against the sandbox
def test_an_unreachable_hook_never_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RECON_NOTIFY_URL", f"http://127.0.0.1:{port}/hook")
    monkeypatch.setenv("RECON_NOTIFY_BUDGET_S", "2")
    with sandbox(seed=3, payments=300) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
    assert (summary.status, summary.exit_code) == ("complete", 0)


def test_a_webhook_setting_that_is_no_url_is_never_tried() -> None:
    transport, seen = _sender([200])
    done = send(SecretStr("not-a-url"), ALERT, transport=transport, sleep=pytest.fail)
    assert (done.sent, done.attempts, seen) == (False, 0, [])
    assert "not an http(s) URL" in done.detail


def test_a_broken_recon_toml_still_alerts_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from recon.config.settings import notify_settings

    (tmp_path / "recon.toml").write_text("notify_budget_s = \n")
    monkeypatch.setenv("RECON_NOTIFY_URL", URL.get_secret_value())
    found = notify_settings()
    assert found is not None
    assert found.notify_url == URL
    monkeypatch.setenv("RECON_NOTIFY_URL", "not-a-url")
    assert notify_settings() is None


def test_the_headline_gives_the_first_reason_and_how_many_more() -> None:
    reason = (
        "disputes unavailable (the list answered 404: not offered (x; y)); "
        "invoices incomplete (2 page(s) failed for good); refunds incomplete (1 page)"
    )
    alert = Alert("r1", "incomplete", 3, reason, account="eu")
    assert alert.text().splitlines()[0] == (
        "recon run r1 (account eu): incomplete (exit 3): disputes unavailable "
        "(the list answered 404: not offered (x; y)) (and 2 more)"
    )


@pytest.mark.parametrize(
    ("notify_on", "exit_code", "new", "sent"),
    [
        ("always", 0, 0, True),
        ("failure", 0, 7, False),
        ("failure", 3, 0, True),
        ("failure", 4, 0, True),  # --fail-on: the night failed on its findings
        ("findings", 0, 0, False),
        ("findings", 0, 1, True),
        ("findings", 0, None, True),  # not known yet: asked again once they are
        ("findings", 1, None, True),
    ],
)
def test_recon_notify_on_says_which_nights_alert(
    notify_on: str, exit_code: int, new: int | None, sent: bool
) -> None:
    from recon.night.notify import wanted

    assert wanted(notify_on, exit_code=exit_code, new_findings=new) is sent


@pytest.mark.integration
@pytest.mark.slow  # two nightly runs against the sandbox
def test_notify_on_failure_is_quiet_on_a_clean_night_and_alerts_an_incomplete_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_NOTIFY_ON", "failure")
    with webhook() as hook, sandbox(seed=5, payments=200) as url:
        monkeypatch.setenv("RECON_NOTIFY_URL", hook.url)
        clean = steps.run_local(overrides_for(tmp_path, url))
        assert (clean.exit_code, hook.received) == (0, [])
        httpx.post(
            f"{url}/_sandbox/faults", json={"poison": ["disputes:1"]}, headers={"x-api-key": KEY}
        ).raise_for_status()
        bad = steps.run_local(overrides_for(tmp_path, url))
    assert bad.exit_code == 3
    (message,) = hook.received
    lines = message["text"].splitlines()
    assert lines[0].startswith(f"recon run {bad.run_id}: incomplete (exit 3): disputes ")
    assert any(line.startswith("new findings: ") and " error, " in line for line in lines)
    assert any("request ids: " in line for line in lines)
    assert lines[-1].startswith("report: ")


def test_no_secret_reaches_the_alert_whatever_a_reason_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECON_API_KEY", "sk_live_alert_canary_77")
    alert = Alert(
        "r1",
        "aborted",
        1,
        "the API refused key sk_live_alert_canary_77; password=hunter22",
        new_findings={"error": 1},
    )
    text = alert.text()
    assert "sk_live_alert_canary_77" not in text
    assert "hunter22" not in text
    assert text.splitlines()[1] == "new findings: 1 error, 0 warn, 0 info"
