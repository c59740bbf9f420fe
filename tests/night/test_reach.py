"""The reachability probe before a run: refused, unresolvable, listening, behind a proxy."""

from __future__ import annotations

import socket

import pytest

from recon.night.reach import UnreachableError, probe


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_is_unreachable_after_a_few_quick_tries() -> None:
    pauses: list[float] = []
    url = f"http://127.0.0.1:{_closed_port()}/api/v1"
    with pytest.raises(UnreachableError) as caught:
        probe(url, sleep=pauses.append)
    assert str(caught.value) == (
        f"cannot reach the API at {url}: connection refused (nothing listens on that port)"
    )
    assert pauses == [0.5, 0.5]  # three tries, bounded pauses between them


def test_a_name_that_does_not_resolve_is_unreachable() -> None:
    with pytest.raises(UnreachableError, match="does not resolve"):
        probe("https://recon-test.invalid/api/v1", sleep=lambda _s: None)


def test_a_listening_port_passes_at_once() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        probe(f"http://127.0.0.1:{port}/api/v1", sleep=pytest.fail)


def test_credentials_in_the_url_never_appear_in_the_message() -> None:
    url = f"http://user:s3cret@127.0.0.1:{_closed_port()}/api/v1"
    with pytest.raises(UnreachableError) as caught:
        probe(url, sleep=lambda _s: None)
    assert "s3cret" not in str(caught.value)


def test_behind_a_proxy_the_probe_leaves_it_to_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", "http://proxy.internal:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    probe(f"http://example.test:{_closed_port()}/api/v1", sleep=pytest.fail)
