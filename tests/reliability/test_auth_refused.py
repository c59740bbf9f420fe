"""Auth refused (401/403): exit 1 within seconds, at most one request per scheme and
resource, a message about the key, no retry storm — counted at the sandbox, not only in
recon's own call log (tests/night/test_nightly_steps.py checks the call log side).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recon.errors import AuthError
from recon.night import nightly as steps
from tests.api.sandbox_support import sandbox_client

from .conftest import KEY, TABLES, overrides_for, sandbox, sandbox_state

pytestmark = pytest.mark.integration


def test_auth_refused_api_key_aborts_the_run_in_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_API_KEY", "a-wrong-key")
    with sandbox(seed=1, payments=2000, faults="flaky") as url:
        started = time.monotonic()
        summary = steps.run_local(overrides_for(tmp_path, url))
        elapsed = time.monotonic() - started
        served = sandbox_state(url)["requests"]
    assert (summary.status, summary.exit_code) == ("failed", steps.EXIT_ABORTED)
    assert summary.reason is not None
    assert "RECON_API_KEY" in summary.reason
    assert "a-wrong-key" not in summary.reason
    assert 1 <= served <= len(TABLES)  # one request per resource at most, no retry
    assert elapsed < 30  # generous: the point is "not after a retry storm"


def test_auth_refused_bearer_token_is_one_request_naming_the_token() -> None:
    with sandbox(seed=1, payments=300) as url:
        with sandbox_client(url, [], api_key=KEY, bearer_token="a-wrong-token") as client:
            before = sandbox_state(url)["requests"]
            with pytest.raises(AuthError) as info:
                client.get_payment("pay_6ixxmpmm6bppi")
        served = sandbox_state(url)["requests"] - before
    assert served == 1
    assert "RECON_BEARER_TOKEN" in str(info.value)
    assert "a-wrong-token" not in str(info.value)
    assert info.value.request_id


def test_auth_refused_403_aborts_the_run_with_one_request_per_resource(tmp_path: Path) -> None:
    from starlette.responses import JSONResponse

    from .conftest import scripted_server

    def forbidden() -> JSONResponse:
        return JSONResponse(
            {"error": "forbidden", "message": "key lacks scope", "requestId": "req_403"},
            403,
            headers={"X-Request-Id": "req_403"},
        )

    with scripted_server(forbidden) as (url, script):
        started = time.monotonic()
        summary = steps.run_local(overrides_for(tmp_path, url))
        elapsed = time.monotonic() - started
    assert (summary.status, summary.exit_code) == ("failed", steps.EXIT_ABORTED)
    assert summary.reason is not None
    assert "RECON_API_KEY" in summary.reason
    assert 1 <= len(script.arrivals) <= len(TABLES)
    assert len({(a.path, a.query) for a in script.arrivals}) == len(script.arrivals)  # no retry
    assert elapsed < 30


class RevokeAfter:
    """ASGI wrapper: the key is revoked mid-run — payments pages past the second answer 401."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.on = False

    async def __call__(self, scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        import orjson

        query = scope.get("query_string", b"").decode().split("&")
        if (
            self.on
            and scope["type"] == "http"
            and scope["path"] == "/api/v1/payments"
            and not {"skip=0", "skip=200"} & set(query)
        ):
            body = orjson.dumps(
                {"error": "unauthorized", "message": "key revoked", "requestId": "req_rev"}
            )
            await send(  # type: ignore[operator]
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"x-request-id", b"req_rev"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})  # type: ignore[operator]
            return
        await self.inner(scope, receive, send)  # type: ignore[operator]


def test_auth_refused_mid_run_aborts_and_leaves_the_published_night_alone(
    tmp_path: Path,
) -> None:
    from recon.sandbox.app import SandboxConfig, create_app
    from recon.sandbox.server import serve_app_in_thread
    from tests.night.test_resume import _content

    from .conftest import TOKEN, read_only

    wrapper = RevokeAfter(
        create_app(SandboxConfig(seed=4, payments=1500, api_key=KEY, bearer_token=TOKEN))
    )
    with serve_app_in_thread(wrapper) as url:
        first = steps.run_local(overrides_for(tmp_path, url))
        assert first.status == "complete"
        before = _content(first.db_path)
        wrapper.on = True
        started = time.monotonic()
        night = steps.run_local(overrides_for(tmp_path, url))
        elapsed = time.monotonic() - started
    assert (night.status, night.exit_code) == ("failed", steps.EXIT_ABORTED)
    assert night.reason is not None
    assert "RECON_API_KEY" in night.reason
    assert elapsed < 30
    after = _content(first.db_path)
    # The failed night is recorded, but no record changed and nothing open was resolved.
    for key in TABLES:
        assert after[key] == before[key], key
    con = read_only(first.db_path)
    opened = {
        r[0]
        for r in con.execute(
            "SELECT finding_key FROM findings WHERE run_id = ? AND state IN ('new', 'open')",
            [first.run_id],
        ).fetchall()
    }
    tonight = dict(
        con.execute(
            "SELECT finding_key, state FROM findings WHERE run_id = ?", [night.run_id]
        ).fetchall()
    )
    resolved = sorted(k for k in opened if tonight.get(k) != "open")
    assert not resolved, resolved[:5]
    calls = con.execute(
        "SELECT count(*), count(DISTINCT query) FROM api_calls "
        "WHERE run_id = ? AND http_status = 401",
        [night.run_id],
    ).fetchone()
    assert calls is not None
    # the refusal, never retried: one per request (pages fetched ahead may have been in
    # flight when the first 401 came, each is refused once)
    assert calls[0] == calls[1] >= 1
    assert calls[0] <= 16  # RECON_MAX_IN_FLIGHT
