"""A base URL under which every list answers 404 is a wrong setting (exit 2 naming
RECON_BASE_URL), not an incomplete night; one list answering 404 stays *unavailable*."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from recon.config.settings import Settings, settings_from
from recon.errors import ConfigError
from recon.night import nightly as steps
from recon.night.extract import LISTED_RESOURCES, extract_all
from recon.warehouse.landing import RunLanding

from .conftest import overrides_for, sandbox

RUN = "20261129T020000Z-0a0b0c"


def _settings(tmp_path: Path) -> Settings:
    return settings_from(
        base_url="https://payments.example.test/v2",
        api_key="a-test-key",
        landing=str(tmp_path / "landing"),
        backoff_initial_s=0,
        backoff_max_s=0,
        max_attempts=2,
    )


def _api(missing: set[str] | None) -> httpx.MockTransport:
    """Every list empty, except those whose path is in `missing` (None: all) answer 404."""

    def handler(request: httpx.Request) -> httpx.Response:
        name = request.url.path.rsplit("/", 1)[1]
        if missing is None or name in missing:
            body = {"error": "not_found", "message": "no such route", "requestId": "req_404"}
            return httpx.Response(404, json=body)
        body = {"data": []} | ({"hasMore": False} if name == "payments" else {})
        return httpx.Response(200, json=body)

    return httpx.MockTransport(handler)


def _extract(tmp_path: Path, missing: set[str] | None, resources: list[str]) -> list[str]:
    settings = _settings(tmp_path)
    landing = RunLanding(settings.landing, RUN)
    landing.create({"started_at": "2026-11-29T02:00:00+00:00"})
    outcomes = extract_all(settings, landing, resources, transport=_api(missing))
    return [o.status for o in outcomes]


def test_every_list_answering_404_is_a_wrong_base_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _extract(tmp_path, None, list(LISTED_RESOURCES))
    assert info.value.setting == "RECON_BASE_URL"
    assert "every list under https://payments.example.test/v2/api/v1 answered 404" in str(
        info.value
    )
    assert "recon appends /api/v1/" in str(info.value)


def test_some_lists_answering_404_are_unavailable_as_before(tmp_path: Path) -> None:
    statuses = _extract(tmp_path, {"refunds", "invoices"}, list(LISTED_RESOURCES))
    assert statuses.count("unavailable") == 2
    assert statuses.count("complete") == len(LISTED_RESOURCES) - 2


def test_one_list_asked_for_and_missing_is_unavailable_not_a_wrong_url(tmp_path: Path) -> None:
    assert _extract(tmp_path, None, ["disputes"]) == ["unavailable"]


@pytest.mark.integration
def test_a_night_under_a_wrong_path_stops_naming_recon_base_url(tmp_path: Path) -> None:
    with sandbox(seed=2, payments=30) as url:
        over = overrides_for(tmp_path, url + "/wrong")
        with pytest.raises(ConfigError) as info:
            steps.run_local(over)
    assert info.value.setting == "RECON_BASE_URL"
    assert "/wrong/api/v1 answered 404" in str(info.value)


@pytest.mark.integration
def test_a_night_extracted_one_resource_at_a_time_stops_at_its_load(tmp_path: Path) -> None:
    # the Dask path: one task per resource, each with its own client; the load step reads
    # the landing's call logs
    with sandbox(seed=2, payments=30) as url:
        over = overrides_for(tmp_path, url + "/wrong")
        run_id = steps.start_step(over)
        for resource in LISTED_RESOURCES:
            assert steps.extract_one_step(over, run_id, resource).status == "unavailable"
        with pytest.raises(ConfigError) as info:
            steps.load_step(over, run_id, publish=False)
    assert info.value.setting == "RECON_BASE_URL"
    assert "(e.g. GET /wrong/api/v1/" in str(info.value)


@pytest.mark.integration
def test_refunds_and_invoices_not_offered_are_unavailable_not_a_wrong_url(
    tmp_path: Path,
) -> None:
    with sandbox(seed=2, payments=30, refunds_list=False, invoices_list=False) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
    assert summary.status == "incomplete"
    assert "refunds unavailable" in (summary.reason or "")
