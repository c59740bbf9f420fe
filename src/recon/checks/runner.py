"""Run the check files against the warehouse and record `check_runs` and `findings`.

Transactions. DuckDB aborts the whole open transaction on *any* failed statement (a parser
or binder error included, measured on DuckDB 2.0), and it has no savepoints. So a broken
check must never run inside the transaction that holds the night's load. `run_checks`
therefore needs a connection with no open transaction (the load committed to the
unpublished working copy) and works in two phases:

1. evaluate — each check's SELECT runs in autocommit into a TEMP table; a failing check
   rolls back only its own statement and is recorded as `errored`;
2. record — one transaction (`lifecycle.record_outcomes`) writes `findings` and
   `check_runs` with set-based SQL (`lifecycle.sql`), replacing earlier rows of this run
   for these checks.

Scope. Before a check runs, `scope.plan_scope` decides from this run's scans and field
presence whether it can be evaluated and over what (`check_runs.coverage` says it in words);
while the checks run, a resource not read whole tonight reads as the records read tonight
(`shadow.Shadows`), so no verdict rests on last night's copy of a record that was not read.

Readers never see a half-written night either way: they read the published file, which the
nightly run replaces by rename after the checks.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from recon.checks.definition import (
    OUTPUT_COLUMNS,
    RESOURCES,
    CheckDefinition,
    parse_check,
    render_description,
    used_parameters,
)
from recon.checks.lifecycle import CheckRun, Outcome, read_check_runs, record_outcomes
from recon.checks.scope import Scan, Scope, plan_scope, read_presence, read_scans
from recon.checks.shadow import NOTHING, Shadows, night_modes
from recon.config.settings import DEFAULT_FIELDS, DEFAULT_REFUND_FAILED_STATUSES, Settings
from recon.errors import CheckDefinitionError, ConfigError, WarehouseError
from recon.money.currency import create_currencies_table
from recon.warehouse.catalogue_views import create_catalogue_objects
from recon.warehouse.published import refresh_reader_objects
from recon.warehouse.sql import read_sql, sql_dir

__all__ = [
    "CheckParams",
    "CheckRun",
    "default_checks_dir",
    "default_sql_dir",
    "ensure_reference_tables",
    "load_checks",
    "run_checks",
]

# Views of sql/reference that several checks read; materialized once per run.
_SHARED_VIEWS = ("refund_payments",)
_RESULTS_DDL = """
CREATE OR REPLACE TEMP TABLE _recon_results (
    check_name   VARCHAR NOT NULL,
    entity       VARCHAR NOT NULL,
    entity_id    VARCHAR NOT NULL,
    currency     VARCHAR,
    amount_minor BIGINT,
    issue_type   VARCHAR NOT NULL,
    detail       VARCHAR
)
"""
_STATUS_DDL = """
CREATE OR REPLACE TEMP TABLE _recon_status (
    check_name    VARCHAR NOT NULL,
    severity      VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,
    reason        VARCHAR,
    description   VARCHAR,
    finding_count BIGINT NOT NULL,
    duration_ms   DOUBLE,
    coverage      VARCHAR,
    partial       VARCHAR[] NOT NULL,   -- resources read but not all covered tonight
    read_partial  VARCHAR[] NOT NULL,   -- of which covered over the records read
    per_resource  BOOLEAN NOT NULL,     -- findings are about one record each
    key_has_issue BOOLEAN NOT NULL      -- issue_type is part of a finding's identity
)
"""


@dataclass(frozen=True)
class CheckParams:
    """The settings the check SQL may use as `$stuck_days`, `$volume_ratio`,
    `$failed_statuses`, `$refund_grace_hours`, and those that word coverage and reasons."""

    stuck_days: int = 7
    volume_ratio: float = 0.5
    failed_statuses: tuple[str, ...] = DEFAULT_REFUND_FAILED_STATUSES
    refund_grace_hours: int = 48
    # The paging parameters' names, to read failed pages' offsets from the call log.
    skip_param: str = "skip"
    page_size_param: str = "max-records"
    fields: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: DEFAULT_FIELDS)

    @classmethod
    def from_settings(cls, settings: Settings) -> CheckParams:
        """The parameters of `settings` (RECON_STUCK_AFTER_DAYS, …)."""
        return cls(
            stuck_days=settings.stuck_after_days,
            volume_ratio=settings.volume_anomaly_ratio,
            failed_statuses=tuple(settings.refund_failed_statuses),
            refund_grace_hours=settings.refund_grace_hours,
            skip_param=settings.skip_param,
            page_size_param=settings.page_size_param,
            fields=settings.fields,
        )


def default_sql_dir() -> Path:
    """recon's `sql/` folder: `<repo>/sql` in a checkout, `recon/sql` in a wheel (pyproject's
    force-include), as located by `recon.warehouse.sql.sql_dir`."""
    try:
        return sql_dir()
    except FileNotFoundError as exc:
        raise ConfigError("checks_dir", f"{exc}; pass checks_dir explicitly") from None


def default_checks_dir() -> Path:
    """`<repo>/sql/checks`."""
    return default_sql_dir() / "checks"


def ensure_reference_tables(con: duckdb.DuckDBPyConnection, sql_dir: Path | None = None) -> None:
    """Create or refresh `currencies`, the `recon_money` macro and the `refund_payments` view
    (idempotent; `sql/reference/*.sql` in name order), then what the catalogue generates:
    `live_records`, `status_values`, `status_transitions` (recon.warehouse.catalogue_views). Needs
    the
    warehouse schema (`sql/migrations/`) in place. With recon's own `sql/` these are made
    with everything else a publish makes for readers, and only when not current
    (`recon.warehouse.published.refresh_reader_objects`: a working copy of a current publish
    has them; a first night's load begun while extracting made them beside the paging,
    recon.night.early; any other working copy without them makes them here)."""
    if sql_dir is None:
        refresh_reader_objects(con)
        return
    create_currencies_table(con)
    reference = (sql_dir or default_sql_dir()) / "reference"
    for path in sorted(reference.glob("*.sql")):
        con.execute(path.read_text(encoding="utf-8"))
    create_catalogue_objects(con)


def load_checks(
    checks_dir: Path | None = None, only: Sequence[str] | None = None
) -> list[CheckDefinition | tuple[str, CheckDefinitionError]]:
    """Parse every `*.sql` in `checks_dir` (name order); a malformed file yields
    `(name, error)` in its place instead of raising."""
    folder = checks_dir if checks_dir is not None else default_checks_dir()
    paths = sorted(folder.glob("*.sql"))
    if only is not None:
        known = {p.stem for p in paths}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ConfigError("only", f"unknown check(s): {', '.join(unknown)}")
        paths = [p for p in paths if p.stem in set(only)]
    loaded: list[CheckDefinition | tuple[str, CheckDefinitionError]] = []
    for path in paths:
        try:
            loaded.append(parse_check(path))
        except CheckDefinitionError as exc:
            loaded.append((path.stem, exc))
    return loaded


def run_checks(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: str,
    as_of: datetime,
    params: CheckParams,
    checks_dir: Path | None = None,
    only: Sequence[str] | None = None,
) -> list[CheckRun]:
    """Evaluate the checks for `run_id` and record `check_runs` and `findings`.

    `con` must have no open transaction (see the module docstring): `run_checks` commits its
    own. Re-running for the same `run_id` replaces that run's rows for these checks. A naive
    `as_of` is taken as UTC. Returns one `CheckRun` per check, in name order.
    """
    if _in_transaction(con):
        raise WarehouseError(
            "run_checks needs a connection with no open transaction: DuckDB aborts the whole "
            "transaction on any failed statement, so a broken check would undo the load. "
            "COMMIT the load first."
        )
    if as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)
    values: dict[str, Any] = {
        "run_id": run_id,
        "as_of": as_of,
        "stuck_days": int(params.stuck_days),
        "volume_ratio": float(params.volume_ratio),
        "failed_statuses": [s.lower() for s in params.failed_statuses],
        "refund_grace_hours": int(params.refund_grace_hours),
    }
    ensure_reference_tables(con)
    _define_money_text(con)
    definitions = load_checks(checks_dir, only)
    scans = read_scans(
        con, run_id, skip_param=params.skip_param, page_size_param=params.page_size_param
    )
    presence = read_presence(con, run_id)
    con.execute(_RESULTS_DDL)
    con.execute(_STATUS_DDL)
    shadows = Shadows(con, run_id)
    try:
        night = night_modes(r for r in RESOURCES if not (r in scans and scans[r].complete))
        shadows.apply(night)
        _materialize_shared(con, definitions)
        outcomes = []
        for item in definitions:
            scope = _plan(item, scans, presence, params)
            if scope is not None and scope.excluded:
                shadows.apply({**night, **dict.fromkeys(scope.excluded, NOTHING)})
            outcomes.append(_evaluate(con, item, scope, values))
            shadows.apply(night)
        shadows.clear()
        record_outcomes(con, outcomes, values)
        return read_check_runs(con, run_id, [o.name for o in outcomes])
    finally:
        shadows.clear()
        for table in (
            "_recon_results",
            "_recon_status",
            "_recon_opening",
            "_recon_read",
            "_recon_tonight",
            "_recon_wanted",
            "_recon_dated",
            "_recon_history",
        ):
            con.execute(f"DROP TABLE IF EXISTS temp.{table}")
        for table in _SHARED_VIEWS:
            con.execute(f"DROP TABLE IF EXISTS temp.{table}")
        con.execute("DROP MACRO IF EXISTS temp.recon_money")


def _plan(
    item: CheckDefinition | tuple[str, CheckDefinitionError],
    scans: Mapping[str, Scan],
    presence: Mapping[tuple[str, str], Any],
    params: CheckParams,
) -> Scope | None:
    if isinstance(item, tuple):
        return None
    return plan_scope(item, scans, presence, params.fields)


def _materialize_shared(
    con: duckdb.DuckDBPyConnection,
    definitions: Sequence[CheckDefinition | tuple[str, CheckDefinitionError]],
) -> None:
    """Compute each shared view (`sql/reference`) once, as a TEMP table of the same name.

    DuckDB resolves a name to a temp object before the database's own, so the checks read
    the materialized rows while their files stay plain SQL over the view (for analysts).
    """
    for view in _SHARED_VIEWS:
        if any(isinstance(d, CheckDefinition) and view in d.sql for d in definitions):
            con.execute(f"DROP TABLE IF EXISTS temp.{view}")
            # The name still means the view here: the temp table does not exist yet.
            con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM {view}")  # noqa: S608


def _define_money_text(con: duckdb.DuckDBPyConnection) -> None:
    """`recon_money` (sql/reference/money.sql) for the checks, as a TEMP macro of the same
    name that shadows it, with the same text for every amount and currency, the
    `currencies` rows written in (`sql/checks_macros/money_text.sql` says why and how)."""
    groups: dict[int, list[str]] = {}
    for code, exponent in con.execute("SELECT code, exponent FROM currencies").fetchall():
        if exponent is not None:
            groups.setdefault(int(exponent), []).append(str(code))
    if any(
        len(code) != 3 or "," in code or "'" in code for codes in groups.values() for code in codes
    ):
        return  # not the ISO list this was written for: keep the reference macro
    head, _, branch = read_sql("checks_macros/money_text.sql").partition(_EACH_EXPONENT)
    common = sorted(groups, key=lambda e: -len(groups[e]))  # exponent 2 first, the usual one
    branches = " ".join(
        branch.strip().format(codes=",".join(sorted(groups[e])), exponent=e) for e in common
    )
    con.execute(head.format(branches=branches))


_EACH_EXPONENT = "-- each exponent\n"


def _in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    # In autocommit every statement gets a new transaction id; inside BEGIN … COMMIT the id
    # stays the same. (An aborted transaction makes this raise, which is right too.)
    first = con.execute("SELECT txid_current()").fetchone()
    second = con.execute("SELECT txid_current()").fetchone()
    return first == second


def _bind(sql: str, values: Mapping[str, Any]) -> dict[str, Any]:
    # DuckDB rejects named parameters that the statement does not use: pass only those used.
    used = used_parameters(sql)
    return {k: v for k, v in values.items() if k in used}


def _evaluate(
    con: duckdb.DuckDBPyConnection,
    item: CheckDefinition | tuple[str, CheckDefinitionError],
    scope: Scope | None,
    values: Mapping[str, Any],
) -> Outcome:
    started = time.perf_counter()
    unread = scope or Scope(evaluate=False)

    def outcome(status: str, reason: str | None, count: int = 0) -> Outcome:
        elapsed = (time.perf_counter() - started) * 1000.0
        if isinstance(item, tuple):
            return Outcome(
                item[0], "error", status, reason, None, count, elapsed, unread, False, True
            )
        evaluated = status in ("passed", "failed")
        return Outcome(
            item.name,
            item.severity,
            status,
            reason,
            render_description(item.description, values),
            count,
            elapsed,
            unread if evaluated else Scope(evaluate=False),
            bool(item.per_resource),
            item.key_has_issue_type,
        )

    if isinstance(item, tuple):
        return outcome("errored", str(item[1]))
    check = item
    if not unread.evaluate:
        return outcome("not_evaluated", unread.reason)
    if check.evaluable_when is not None:
        try:
            row = con.execute(check.evaluable_when, _bind(check.evaluable_when, values)).fetchone()
        except duckdb.Error as exc:
            return outcome("errored", f"evaluable_when failed: {_first_line(exc)}")
        if row is None or not row[0]:
            return outcome("not_evaluated", check.not_evaluated_reason or "evaluable_when is false")
    try:
        count = _run_select(con, check, values)
    except (duckdb.Error, CheckDefinitionError) as exc:
        con.execute("DELETE FROM _recon_results WHERE check_name = ?", [check.name])
        return outcome("errored", _first_line(exc))
    return outcome("failed" if count else "passed", None, count)


def _run_select(
    con: duckdb.DuckDBPyConnection, check: CheckDefinition, values: Mapping[str, Any]
) -> int:
    """Insert the check's rows into `_recon_results` in one autocommit statement; count them."""
    bound = _bind(check.sql, values)
    # The SQL comes from a check file (trusted, reviewed like code); values are bound.
    columns = [d[0] for d in con.execute(f"DESCRIBE {check.sql}\n", bound).fetchall()]
    if tuple(columns) != OUTPUT_COLUMNS:
        raise CheckDefinitionError(
            f"the SELECT must return exactly {', '.join(OUTPUT_COLUMNS)} (in this order); "
            f"it returns {', '.join(columns)}"
        )
    # The INSERT answers with the number of rows it inserted.
    inserted = con.execute(
        "INSERT INTO _recon_results "  # noqa: S608 - the check's SQL is trusted; values bound
        "SELECT $recon_check_name, entity, entity_id, currency, amount_minor, issue_type, detail "
        f"FROM (\n{check.sql}\n) AS _check",
        {**bound, "recon_check_name": check.name},
    ).fetchone()
    count = int(inserted[0]) if inserted else 0
    if count < 2:  # one row or none: no finding key twice
        return count
    # The finding key: `check:entity_id:issue_type`, or `check:entity_id` (finding_key).
    duplicate = con.execute(
        "SELECT entity_id || CASE WHEN $with_issue THEN ':' || issue_type ELSE '' END, count(*) "
        "FROM _recon_results WHERE check_name = $name GROUP BY ALL HAVING count(*) > 1 LIMIT 1",
        {"name": check.name, "with_issue": check.key_has_issue_type},
    ).fetchone()
    if duplicate is not None:
        raise CheckDefinitionError(
            f"returned {duplicate[1]} rows for the finding key {check.name}:{duplicate[0]}; "
            f"({', '.join(check.finding_key)}) must be unique"
        )
    return count


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
