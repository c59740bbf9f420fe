"""The workbench's JSON API against `recon serve` running on 127.0.0.1: sessions, CSRF,
roles, the queue's paging and filters, and the four eyes."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import duckdb
import httpx
import pytest

from tests.workbench.support import (
    KEY_BIG,
    KEY_SHORT,
    KEY_SMALL,
    KEY_SUGGEST,
    KEY_XSS,
    PASSWORD,
    RECON,
    XSS,
    Server,
    clean_env,
    login,
)

pytestmark = pytest.mark.integration


def _key(key: str) -> str:
    return quote(key, safe="")


def _trail(db: Path) -> str:
    return db.with_name("recon.acks.jsonl").read_text()


def test_without_a_session_every_endpoint_answers_401(server: Server) -> None:
    with httpx.Client(base_url=server.url) as anon:
        assert anon.get("/api/v1/findings").status_code == 401
        assert anon.get("/api/v1/trail").status_code == 401
        answer = anon.post(f"/api/v1/findings/{_key(KEY_SHORT)}/comment", json={"note": "x"})
        assert answer.status_code == 401
        assert answer.json() == {"error": "log in first: POST /api/v1/session"}
        page = anon.get("/queue", follow_redirects=False)
        assert page.status_code == 303
        assert page.headers["location"].startswith("/login")


def test_login_sets_a_strict_httponly_cookie_and_a_bad_password_is_401(server: Server) -> None:
    with httpx.Client(base_url=server.url) as client:
        good = client.post("/api/v1/session", json={"user": "alice", "password": PASSWORD})
        assert good.status_code == 200
        assert good.json()["user"] == "alice"
        assert good.json()["role"] == "preparer"
        cookie = good.headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=strict" in cookie
        bad = client.post("/api/v1/session", json={"user": "bob", "password": "wrong one here"})
        assert bad.status_code == 401
    trail = _trail(server.db)
    assert '"action":"login"' in trail
    assert PASSWORD not in trail
    assert "wrong one here" not in trail
    assert PASSWORD not in server.db.with_name("recon.users.json").read_text()


def test_failed_logins_are_rate_limited(server: Server) -> None:
    with httpx.Client(base_url=server.url) as client:
        codes = [
            client.post(
                "/api/v1/session", json={"user": "mallory", "password": f"guess {i}"}
            ).status_code
            for i in range(7)
        ]
    assert codes[:5] == [401] * 5
    assert codes[5:] == [429, 429]


def test_a_change_without_the_csrf_token_is_403(server: Server) -> None:
    client, csrf = login(server.url, "alice")
    url = f"/api/v1/findings/{_key(KEY_SHORT)}/comment"
    assert client.post(url, json={"note": "no token"}).status_code == 403
    wrong = client.post(url, json={"note": "bad token"}, headers={"X-CSRF-Token": csrf + "x"})
    assert wrong.status_code == 403
    assert "no token" not in _trail(server.db)
    ok = client.post(url, json={"note": "with token"}, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200
    assert ok.json() == {"applied": True}


def test_a_viewer_reads_but_may_not_act(server: Server) -> None:
    client, csrf = login(server.url, "vic")
    assert client.get("/api/v1/findings").status_code == 200
    answer = client.post(
        f"/api/v1/findings/{_key(KEY_SMALL)}/assign",
        json={"owner": "vic"},
        headers={"X-CSRF-Token": csrf},
    )
    assert answer.status_code == 403
    assert "viewer" in answer.json()["error"]


def test_the_queue_pages_by_cursor_without_gaps_or_repeats(server: Server) -> None:
    client, _ = login(server.url, "vic")
    everything = client.get("/api/v1/findings", params={"state": "all", "limit": 50}).json()
    assert everything["next"] is None
    seen: list[str] = []
    cursor = None
    while True:
        params = {"state": "all", "limit": "2", **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/v1/findings", params=params).json()
        assert len(page["items"]) <= 2
        seen += [i["finding_key"] for i in page["items"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert seen == [i["finding_key"] for i in everything["items"]]
    assert len(set(seen)) == 5
    item = everything["items"][0]
    assert set(item) >= {
        "finding_key",
        "check_name",
        "severity",
        "currency",
        "amount_minor",
        "work_state",
        "owner",
        "known_days",
        "item_age_days",
        "due_at",
    }
    assert client.get("/api/v1/findings", params={"cursor": "nonsense!"}).status_code == 400
    assert client.get("/api/v1/findings", params={"amount_min": "1.5"}).status_code == 400


def test_the_queue_filters_on_the_server(server: Server) -> None:
    client, _ = login(server.url, "vic")

    def keys(**params: str) -> set[str]:
        body = client.get("/api/v1/findings", params={"state": "all", **params}).json()
        return {i["finding_key"] for i in body["items"]}

    assert keys(currency="usd") == {KEY_BIG}
    assert keys(severity="warn") == {KEY_SMALL}
    assert keys(amount_min="2500", amount_max="4200") == {KEY_XSS, KEY_SUGGEST}
    assert keys(known_min="5") == {KEY_XSS, KEY_BIG, KEY_SMALL}
    assert keys(check="ledger_suggested_match") == {KEY_SUGGEST}


def test_assign_shows_at_once_with_the_user_as_who(server: Server) -> None:
    client, csrf = login(server.url, "alice")
    answer = client.post(
        f"/api/v1/findings/{_key(KEY_SUGGEST)}/assign",
        json={"owner": "alice", "note": "looking"},
        headers={"X-CSRF-Token": csrf},
    )
    assert answer.json() == {"applied": True}
    mine = client.get("/api/v1/findings", params={"owner": "alice"}).json()["items"]
    assert [(i["finding_key"], i["work_state"]) for i in mine] == [(KEY_SUGGEST, "investigating")]
    lines = client.get("/api/v1/trail", params={"finding_key": KEY_SUGGEST}).json()["lines"]
    assert [(x["action"], x["who"], x["owner"]) for x in lines] == [("assign", "alice", "alice")]


def test_a_write_off_needs_another_approver(server: Server) -> None:
    alice, alice_csrf = login(server.url, "alice")
    bob, bob_csrf = login(server.url, "bob")
    carol, carol_csrf = login(server.url, "carol")
    proposed = alice.post(
        f"/api/v1/findings/{_key(KEY_XSS)}/resolve",
        json={"reason": "written_off", "note": "not worth chasing"},
        headers={"X-CSRF-Token": alice_csrf},
    )
    assert proposed.status_code == 202
    pid = proposed.json()["proposal"]
    state = alice.get("/api/v1/findings", params={"state": "all", "check": KEY_XSS.split(":")[0]})
    assert state.json()["items"][0]["work_state"] != "resolved_manually"  # not yet
    # the maker (a preparer) may not approve; nor may an approver approve their own
    denied = alice.post(
        f"/api/v1/proposals/{pid}/approve", json={}, headers={"X-CSRF-Token": alice_csrf}
    )
    assert denied.status_code == 403
    own = bob.post(
        f"/api/v1/findings/{_key(KEY_SMALL)}/resolve",
        json={"reason": "written_off", "note": "bob's own"},
        headers={"X-CSRF-Token": bob_csrf},
    ).json()["proposal"]
    selfish = bob.post(
        f"/api/v1/proposals/{own}/approve", json={"note": "me"}, headers={"X-CSRF-Token": bob_csrf}
    )
    assert selfish.status_code == 403
    assert "four eyes" in selfish.json()["error"]
    inbox = carol.get("/api/v1/proposals").json()["items"]
    assert {p["id"] for p in inbox} >= {pid, own}
    approved = carol.post(
        f"/api/v1/proposals/{pid}/approve",
        json={"note": "agreed"},
        headers={"X-CSRF-Token": carol_csrf},
    )
    assert approved.status_code == 200
    again = bob.post(
        f"/api/v1/proposals/{pid}/approve", json={}, headers={"X-CSRF-Token": bob_csrf}
    )
    assert again.status_code == 409
    done = alice.get("/api/v1/findings", params={"state": "resolved_manually"}).json()["items"]
    assert KEY_XSS in {i["finding_key"] for i in done}
    lines = alice.get("/api/v1/trail", params={"finding_key": KEY_XSS}).json()["lines"]
    assert [(x["action"], x["who"]) for x in lines] == [
        ("propose", "alice"),
        ("approve", "carol"),
        ("resolve", "alice"),
    ]
    assert lines[-1]["approved_by"] == "carol"
    assert lines[-1]["reason"] == "written_off"
    verify = subprocess.run(
        [str(RECON), "findings", "verify", "--db", str(server.db)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert verify.returncode == 0, verify.stderr


def test_above_the_threshold_a_resolution_is_a_proposal(server: Server) -> None:
    client, csrf = login(server.url, "alice")
    answer = client.post(
        f"/api/v1/findings/{_key(KEY_BIG)}/resolve",
        json={"reason": "timing", "note": "settles tomorrow"},
        headers={"X-CSRF-Token": csrf},
    )
    assert answer.status_code == 202
    assert "proposal" in answer.json()


def test_a_manual_match_is_proposed_and_rejected_with_a_note(server: Server) -> None:
    alice, alice_csrf = login(server.url, "alice")
    bob, bob_csrf = login(server.url, "bob")
    answer = alice.post(
        "/api/v1/matches",
        json={"order": "ORD-1", "payments": ["pay_1"], "note": "same customer"},
        headers={"X-CSRF-Token": alice_csrf},
    )
    assert answer.status_code == 202
    pid = answer.json()["proposal"]
    unknown = alice.post(
        "/api/v1/matches",
        json={"order": "ORD-1", "payments": ["pay_nope"], "note": "x"},
        headers={"X-CSRF-Token": alice_csrf},
    )
    assert unknown.status_code == 400
    bare = bob.post(f"/api/v1/proposals/{pid}/reject", json={}, headers={"X-CSRF-Token": bob_csrf})
    assert bare.status_code == 400
    rejected = bob.post(
        f"/api/v1/proposals/{pid}/reject",
        json={"note": "amounts differ by 1.50"},
        headers={"X-CSRF-Token": bob_csrf},
    )
    assert rejected.status_code == 200
    states = {p["id"]: p["state"] for p in bob.get("/api/v1/proposals?state=all").json()["items"]}
    assert states[pid] == "rejected"
    assert '"action":"match"' not in _trail(server.db)


def test_accepting_a_suggestion_is_a_proposal(server: Server) -> None:
    client, csrf = login(server.url, "alice")
    answer = client.post(
        f"/api/v1/findings/{_key(KEY_SUGGEST)}/accept",
        json={"note": "the suggested payment"},
        headers={"X-CSRF-Token": csrf},
    )
    assert answer.status_code == 202
    found = client.get(f"/api/v1/findings/{_key(KEY_SUGGEST)}").json()
    assert found["candidates"][0]["payment_id"] == "pay_9"
    assert any(p["kind"] == "match" for p in found["proposals"])


def test_a_books_reference_cannot_inject_a_script(server: Server) -> None:
    client, _ = login(server.url, "vic")
    for url in (f"/findings/{_key(KEY_XSS)}", "/queue?state=all"):
        page = client.get(url)
        assert page.status_code == 200
        assert "<script>alert" not in page.text
        assert "&lt;script&gt;alert" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
    body = client.get(f"/api/v1/findings/{_key(KEY_XSS)}").json()
    assert body["entity_id"] == XSS  # the API gives the value as it is; pages escape it


def test_the_server_does_not_hold_the_warehouse(server: Server) -> None:
    client, _ = login(server.url, "vic")
    assert client.get("/api/v1/findings").status_code == 200
    # Read-write, as an action's trail record needs. The server may be reading it for a
    # moment (its queue's snapshot is made again after an earlier test's action changed the
    # file), never between requests: a few seconds at most.
    deadline = time.monotonic() + 30
    while True:
        try:
            con = duckdb.connect(str(server.db))
            break
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    try:
        assert con.execute("SELECT count(*) FROM findings").fetchone() == (5,)
    finally:
        con.close()


def test_a_disabled_user_is_logged_out(server: Server) -> None:
    subprocess.run(
        [
            str(RECON),
            "users",
            "add",
            "dave",
            "--role",
            "preparer",
            "--password-stdin",
            "--db",
            str(server.db),
        ],
        input=PASSWORD,
        text=True,
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    client, _ = login(server.url, "dave")
    assert client.get("/api/v1/findings").status_code == 200
    subprocess.run(
        [str(RECON), "users", "disable", "dave", "--db", str(server.db)],
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    assert client.get("/api/v1/findings").status_code == 401
    again = httpx.post(server.url + "/api/v1/session", json={"user": "dave", "password": PASSWORD})
    assert again.status_code == 401


def test_a_bulk_action_is_previewed_applied_as_one_batch_and_undone(server: Server) -> None:
    client, csrf = login(server.url, "alice")
    headers = {"X-CSRF-Token": csrf}
    ask = {"action": "assign", "owner": "alice", "filters": {"currency": "JPY", "state": "all"}}
    preview = client.post("/api/v1/bulk", json={**ask, "preview": True}, headers=headers)
    assert preview.json() == {"count": 1, "needs_approval": 0, "keys": [KEY_SMALL]}
    assert "batch" not in _trail(server.db)  # a preview writes nothing
    applied = client.post("/api/v1/bulk", json=ask, headers=headers).json()
    assert applied["applied"] == 1
    state = client.get("/api/v1/findings", params={"currency": "JPY"}).json()["items"][0]
    assert (state["work_state"], state["owner"]) == ("investigating", "alice")
    undone = client.post(f"/api/v1/batches/{applied['batch']}/undo", json={}, headers=headers)
    assert undone.json() == {"undone": 1}
    state = client.get("/api/v1/findings", params={"currency": "JPY"}).json()["items"][0]
    assert state["work_state"] == "open"
    write_off = {
        "action": "resolve",
        "reason": "written_off",
        "note": "small",
        "filters": {"currency": "JPY"},
    }
    proposed = client.post("/api/v1/bulk", json=write_off, headers=headers).json()
    assert proposed["applied"] == 0
    assert len(proposed["proposals"]) == 1
    viewer, viewer_csrf = login(server.url, "vic")
    denied = viewer.post("/api/v1/bulk", json=ask, headers={"X-CSRF-Token": viewer_csrf})
    assert denied.status_code == 403


def test_a_request_naming_another_host_is_refused(server: Server) -> None:
    rebound = httpx.get(server.url + "/login", headers={"Host": "evil.example:8765"})
    assert rebound.status_code == 400
    assert httpx.get(server.url + "/login").status_code == 200
