"""The matching rules: one SQL file each under `sql/matching/`, applied in priority order.

A rule file starts with a header read as a check's is (recon.warehouse.sql.read_header; its
name, description, cardinality and claims are plain text)::

    -- name: exact_reference          (the file stem)
    -- description: What it matches, in a sentence.
    -- priority: 10                   (lower first)
    -- cardinality: 1:N               (1:1 | 1:N one order, several payments | N:1)
    -- claims: unmatched              (unmatched: links what no earlier rule linked;
    --                                 linked: takes over links an earlier rule made;
    --                                 proposes: proposals only, nothing is linked)
    -- parameters: [tolerance_minor]  (bound by DuckDB, never formatted in)
    SELECT order_key, payment_id FROM unmatched_orders … JOIN unmatched_payments …

It reads the temp tables `match_orders(order_key, reference, payment_reference, amount_minor,
currency, status, created_at, expects_payment)`, `match_payments(id, reference,
amount_minor, currency, status, settled, created_at)` (live payments), `match_links` (what
earlier rules linked), `unmatched_orders` / `unmatched_payments` (what they did not) and
`match_manual` (the people's matches that still hold). The engine keeps a rule to its
cardinality (a pair that would give a payment two orders in a 1:N rule is dropped, never
picked) and records the rule of every link in `ledger_links`; `sql/ledger/classify_*.sql` then
classifies orders by their links.

    apply_rules(con, params, run_id) -> {rule: links}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from recon.errors import ConfigError
from recon.warehouse.sql import (
    HeaderError,
    read_header,
    read_sql,
    sql_dir,
    sql_statements,
)

__all__ = ["CARDINALITIES", "MatchRule", "apply_rules", "load_rules"]

CARDINALITIES = ("1:1", "1:N", "N:1")
_CLAIMS = ("unmatched", "linked", "proposes")
# Taken as written, not as YAML (`1:1` would be a base-60 number; a sentence holds colons).
_PLAIN = frozenset({"name", "description", "cardinality", "claims"})


@dataclass(frozen=True)
class MatchRule:
    """One parsed rule file."""

    name: str
    description: str
    priority: int
    cardinality: str
    claims: str
    parameters: tuple[str, ...]
    sql: str


def parse_rule(path: Path) -> MatchRule:
    """Parse `path`; a malformed header is a ConfigError naming the file."""
    where = f"sql/matching/{path.name}"
    try:
        meta, body = read_header(path.read_text(encoding="utf-8"), plain=_PLAIN)
    except HeaderError as exc:
        raise ConfigError(where, str(exc)) from None
    if meta.get("name") != path.stem:
        raise ConfigError(where, "header must start with `-- name: <the file's stem>`")
    if meta.get("cardinality") not in CARDINALITIES:
        raise ConfigError(where, f"cardinality must be one of {', '.join(CARDINALITIES)}")
    if meta.get("claims", "unmatched") not in _CLAIMS:
        raise ConfigError(where, f"claims must be one of {', '.join(_CLAIMS)}")
    if not isinstance(meta.get("priority"), int):
        raise ConfigError(where, "priority must be a whole number")
    return MatchRule(
        name=path.stem,
        description=str(meta.get("description", "")),
        priority=int(meta["priority"]),
        cardinality=str(meta["cardinality"]),
        claims=str(meta.get("claims", "unmatched")),
        parameters=tuple(meta.get("parameters") or ()),
        sql=body.rstrip(";"),
    )


def load_rules(folder: Path | None = None) -> list[MatchRule]:
    """Every rule of `sql/matching/`, in priority order (then name)."""
    folder = folder or sql_dir() / "matching"
    rules = [parse_rule(p) for p in sorted(folder.glob("*.sql"))]
    return sorted(rules, key=lambda r: (r.priority, r.name))


# A rule's links are made in steps, one join each, through temp tables: at a million orders
# and payments, the rule's pairs joined again to both sides in one statement (and counted
# by a window over them) needed more than the night's 192 MiB that DuckDB could not spill
# (issue 38); a join at a time, and counts by GROUP BY, spill.
_FOUND = (
    "CREATE OR REPLACE TEMP TABLE match_found AS "
    "SELECT DISTINCT order_key, payment_id FROM ({sql}) AS rule_rows"
)
_FOUND_ORDERS = (
    "CREATE OR REPLACE TEMP TABLE match_found_orders AS "
    "SELECT f.order_key, f.payment_id, o.order_row FROM match_found AS f "
    "JOIN unmatched_orders AS o ON o.order_key = f.order_key"
)
_FREE = (
    "CREATE OR REPLACE TEMP TABLE match_free AS "
    "SELECT f.order_key, f.payment_id, f.order_row, p.payment_row FROM match_found_orders AS f "
    "JOIN unmatched_payments AS p ON p.id = f.payment_id"
)
_LINK = """
INSERT INTO match_links BY NAME
SELECT order_key, payment_id, $rule AS rule, $priority AS priority, order_row, payment_row
FROM match_free
{keep}
"""
# A rule keeps to its cardinality: a payment two orders claim (1:1, 1:N) or an order two
# payments claim (1:1, N:1) is left unmatched by that rule, never picked.
_ONE_ORDER = (
    "payment_id IN (SELECT payment_id FROM match_free GROUP BY payment_id HAVING count(*) = 1)"
)
_ONE_PAYMENT = (
    "order_key IN (SELECT order_key FROM match_free GROUP BY order_key HAVING count(*) = 1)"
)
_KEEP = {
    "1:1": f"WHERE {_ONE_ORDER} AND {_ONE_PAYMENT}",
    "1:N": f"WHERE {_ONE_ORDER}",
    "N:1": f"WHERE {_ONE_PAYMENT}",
}
_REFRESH = (
    "DELETE FROM unmatched_orders WHERE order_key IN "
    "(SELECT order_key FROM match_links WHERE rule = $rule)",
    "DELETE FROM unmatched_payments WHERE id IN "
    "(SELECT payment_id FROM match_links WHERE rule = $rule)",
)
# the steps' tables, and sql/ledger/classify_setup.sql's
_STEP_TABLES = (
    "match_found",
    "match_found_orders",
    "match_free",
    "match_linked",
    "match_carts",
)

_TAKE_OVER = """
UPDATE match_links SET rule = $rule, priority = $priority
WHERE order_key IN (SELECT order_key FROM ({sql}) AS rule_rows)
"""


def apply_rules(
    con: duckdb.DuckDBPyConnection,
    params: Mapping[str, Any],
    run_id: str,
    manual: list[tuple[str, str]] | None = None,
    rules: list[MatchRule] | None = None,
) -> dict[str, int]:
    """Apply every rule to the landed books and live payments; fill `ledger_links` and
    `ledger_suggestions` for `run_id`. `manual`: the (order key, payment id) pairs of the
    people's matches that still hold. Returns the links per rule."""
    for stmt in sql_statements(read_sql("reference/money.sql")):
        con.execute(stmt)
    for stmt in sql_statements(read_sql("ledger/match_setup.sql")):
        con.execute(stmt)
    con.execute("CREATE OR REPLACE TEMP TABLE match_manual (order_key VARCHAR, payment_id VARCHAR)")
    if manual:
        con.executemany("INSERT INTO match_manual VALUES (?, ?)", [list(m) for m in manual])
    counts: dict[str, int] = {}
    for rule in rules if rules is not None else load_rules():
        values = {p: params[p] for p in rule.parameters}
        missing = [p for p in rule.parameters if p not in params]
        if missing:
            raise ConfigError(f"sql/matching/{rule.name}.sql", f"unknown parameter(s) {missing}")
        if rule.claims == "proposes":
            con.execute(f"INSERT INTO match_proposals BY NAME {rule.sql}", values)
            continue
        bind = {**values, "rule": rule.name, "priority": rule.priority}
        if rule.claims == "linked":
            con.execute(_TAKE_OVER.format(sql=rule.sql), bind)
        else:
            con.execute(_FOUND.format(sql=rule.sql), values)
            con.execute(_FOUND_ORDERS)
            con.execute(_FREE)
            con.execute(
                _LINK.format(keep=_KEEP[rule.cardinality]),
                {"rule": rule.name, "priority": rule.priority},
            )
            for stmt in _REFRESH:
                con.execute(stmt, {"rule": rule.name})
    for name, n in con.execute(
        "SELECT rule, count(DISTINCT order_key) FROM match_links GROUP BY rule"
    ).fetchall():
        counts[str(name)] = int(n)
    con.execute("DELETE FROM ledger_links")
    con.execute(
        "INSERT INTO ledger_links BY NAME "
        "SELECT * EXCLUDE (order_row, payment_row), ? AS run_id FROM match_links",
        [run_id],
    )
    con.execute("DELETE FROM ledger_suggestions")
    con.execute(
        "INSERT INTO ledger_suggestions BY NAME SELECT *, ? AS run_id FROM match_proposals",
        [run_id],
    )
    return counts


def drop_rule_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the engine's temp objects."""
    for table in (
        "unmatched_orders",
        "unmatched_payments",
        "match_orders",
        "match_payments",
        "match_links",
        "match_proposals",
        "match_manual",
        *_STEP_TABLES,
    ):
        con.execute(f"DROP TABLE IF EXISTS temp.{table}")
