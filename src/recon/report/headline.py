"""The first screen of report.html: *the run* (complete or not) apart from *the books*
(how many breaks are open, how many came tonight, the oldest, the amount at risk per
currency), and what to do next.

    books = books_headline(con, run_id, ledger_configured=True)

The figures come from `sql/report/headline.sql`; amounts stay integers per currency and
are never added across currencies. Its colour follows the breaks, not the run: `bad` when
breaks came (or came back) tonight, `warn` when breaks are open but none is new, `ok` when
nothing is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from recon.warehouse.sql import read_sql

__all__ = ["BooksHeadline", "CurrencyAtRisk", "books_headline", "next_commands"]


@dataclass(frozen=True)
class CurrencyAtRisk:
    """One currency's open breaks and the sum of their amounts, in minor units."""

    currency: str | None
    open: int
    at_risk_minor: int


@dataclass
class BooksHeadline:
    """Where the books stand after a run (the first screen's second panel)."""

    books: bool  # True: the ledger's breaks; False: every check's open findings
    open: int = 0
    acknowledged: int = 0
    new: int = 0
    reopened: int = 0
    resolved: int = 0
    oldest_item_days: int | None = None
    known_days: int | None = None
    at_risk: list[CurrencyAtRisk] = field(default_factory=list)

    @property
    def tone(self) -> str:
        """`bad` (new or reopened breaks tonight), `warn` (open breaks) or `ok`."""
        if self.new or self.reopened:
            return "bad"
        return "warn" if self.open else "ok"

    @property
    def noun(self) -> str:
        return "break" if self.books else "finding"


def books_headline(
    con: duckdb.DuckDBPyConnection, run_id: str, *, ledger_configured: bool
) -> BooksHeadline:
    """The books' figures of `run_id` (the ledger's breaks when books were reconciled)."""
    headline = BooksHeadline(books=ledger_configured)
    try:
        rows = con.execute(
            read_sql("report/headline.sql"), {"run_id": run_id, "books": ledger_configured}
        ).fetchall()
    except duckdb.CatalogException:  # a warehouse from before findings_current
        return headline
    for currency, open_, acked, new, reopened, resolved, at_risk, oldest, known in rows:
        headline.open += open_
        headline.acknowledged += acked
        headline.new += new
        headline.reopened += reopened
        headline.resolved += resolved
        if oldest is not None:
            headline.oldest_item_days = max(headline.oldest_item_days or 0, oldest)
        if known is not None:
            headline.known_days = max(headline.known_days or 0, known)
        if open_:
            headline.at_risk.append(CurrencyAtRisk(currency, open_, int(at_risk)))
    return headline


def next_commands(account: str | None) -> list[tuple[str, str]]:
    """(command, what it is for) for the first screen: work the queue, export the worklist,
    open the workbench."""
    where = f" --account {account}" if account else ""
    return [
        (f"recon findings list{where}", "work the queue: every open finding, worst first"),
        (f"recon findings list --state new{where}", "only what came tonight"),
        (
            f"recon findings export worklist.xlsx{where}",
            "the worklist to fill in (action, owner, note); then recon findings import it",
        ),
        (
            f"recon serve{where}",
            "the workbench on 127.0.0.1: the queue in a browser, write-offs and matches "
            "approved by a second person",
        ),
    ]
