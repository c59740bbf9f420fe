"""Fields the spec does not show are a documented mapping (`[fields.<resource>]` in
recon.toml, RECON_FIELDS as JSON); their presence is counted per run at load, and a check
that needs a field absent from every record says so instead of flooding or passing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from recon.checks import CheckParams, CheckRun, run_checks
from recon.config.settings import DEFAULT_FIELDS, load_settings
from recon.errors import ConfigError

from .conftest import LandNight

pytestmark = pytest.mark.usefixtures("clean_env")

PAY = {
    "id": "pay_1",
    "amountMinor": 1000,
    "currency": "EUR",
    "status": "refunded",
    "createdAt": "2026-11-10T10:00:00Z",
}


def test_the_defaults_are_recon_s_reading_of_the_spec() -> None:
    settings = load_settings()
    assert settings.fields == DEFAULT_FIELDS
    assert DEFAULT_FIELDS["disputes"]["payment_id"] == "paymentId"
    assert DEFAULT_FIELDS["disputes"]["amount"] == "amount"
    assert DEFAULT_FIELDS["payment_intents"]["amount"] == "amount"
    assert DEFAULT_FIELDS["invoices"]["due_date"] == "dueDate"
    created = {r: f["created_at"] for r, f in DEFAULT_FIELDS.items()}
    assert created == dict.fromkeys(DEFAULT_FIELDS, "createdAt")


def test_recon_toml_maps_a_field_and_keeps_the_other_defaults(tmp_path: Path) -> None:
    (tmp_path / "recon.toml").write_text(
        '[fields.disputes]\namount = "disputedAmount"\npayment_id = "charge.id"\n'
    )
    fields = load_settings().fields
    assert fields["disputes"]["amount"] == "disputedAmount"
    assert fields["disputes"]["payment_id"] == "charge.id"
    assert fields["disputes"]["created_at"] == "createdAt"
    assert fields["invoices"] == DEFAULT_FIELDS["invoices"]


def test_the_environment_maps_fields_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_FIELDS", '{"invoices": {"due_date": "dueOn"}}')
    assert load_settings().fields["invoices"]["due_date"] == "dueOn"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('{"wallets": {"amount": "a"}}', "unknown resource 'wallets'"),
        ('{"disputes": {"colour": "c"}}', "disputes has no mapped field 'colour'"),
        ('{"disputes": {"amount": "amount[0]"}}', "'amount[0]' is not a field name"),
        ('{"disputes": {"amount": ""}}', "'' is not a field name"),
    ],
)
def test_a_bad_mapping_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    monkeypatch.setenv("RECON_FIELDS", value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.setting == "RECON_FIELDS"
    assert message in caught.value.problem


def _checks(tmp_path: Path, run_id: str) -> tuple[duckdb.DuckDBPyConnection, dict[str, CheckRun]]:
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    runs = run_checks(
        con, run_id=run_id, as_of=datetime(2026, 11, 20, 2, tzinfo=UTC), params=CheckParams()
    )
    return con, {r.check_name: r for r in runs}


def test_mapped_fields_are_loaded_and_their_presence_counted(
    tmp_path: Path, land_night: LandNight
) -> None:
    disputes = [
        {
            "id": "dp_1",
            "status": "lost",
            "charge": {"id": "pay_1"},
            "disputedAmount": {"amountMinor": 700, "currency": "EUR"},
        },
        {"id": "dp_2", "status": "won", "disputedAmount": None},
    ]
    fields = {**DEFAULT_FIELDS, "disputes": {**DEFAULT_FIELDS["disputes"]}}
    fields["disputes"].update(amount="disputedAmount", payment_id="charge.id")
    run_id, _ = land_night({"payments": [PAY], "disputes": disputes}, fields=fields)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute(
        "SELECT id, payment_id, amount_minor, currency FROM disputes ORDER BY id"
    ).fetchall() == [("dp_1", "pay_1", 700, "EUR"), ("dp_2", None, None, None)]
    presence = {
        (r[0], r[1]): (r[2], r[3], r[4])
        for r in con.execute(
            "SELECT resource, field, json_path, records, present FROM field_presence "
            "WHERE run_id = ?",
            [run_id],
        ).fetchall()
    }
    assert presence[("disputes", "payment_id")] == ('$."charge"."id"', 2, 1)
    assert presence[("disputes", "amount")] == ('$."disputedAmount"', 2, 1)
    assert presence[("disputes", "created_at")] == ('$."createdAt"', 2, 0)
    assert presence[("payments", "created_at")] == ('$."createdAt"', 1, 1)
    con.close()
    con, runs = _checks(tmp_path, run_id)
    assert runs["dispute_on_refunded_payment"].status == "failed"
    con.close()


def test_a_mapped_field_absent_from_every_record_is_not_evaluated_never_a_flood(
    tmp_path: Path, land_night: LandNight
) -> None:
    disputes = [{"id": f"dp_{i}", "status": "lost", "pay": "pay_1"} for i in range(3)]
    intents = [{"id": "pi_1", "status": "succeeded", "value": -5, "currency": "EUR"}]
    run_id, _ = land_night({"payments": [PAY], "disputes": disputes, "payment_intents": intents})
    con, runs = _checks(tmp_path, run_id)
    run = runs["dispute_on_refunded_payment"]
    assert (run.status, run.reason) == (
        "not_evaluated",
        "field paymentId not present in any of 3 disputes (setting [fields.disputes] payment_id)",
    )
    run = runs["intent_negative_amount"]
    assert (run.status, run.reason) == (
        "not_evaluated",
        "field amount not present in any of 1 payment_intents "
        "(setting [fields.payment_intents] amount)",
    )
    run = runs["impossible_amounts"]
    assert run.status == "passed"
    assert run.coverage == (
        "all 1 payment; refunds not evaluated (not scanned in this run); "
        "disputes not evaluated (field amount not present); "
        "invoices not evaluated (not scanned in this run); "
        "payment_intents not evaluated (field amount not present)"
    )
    assert con.execute(
        "SELECT count(*) FROM findings WHERE run_id = ? "
        "AND entity IN ('dispute', 'payment_intent')",
        [run_id],
    ).fetchone() == (0,)
    con.close()
