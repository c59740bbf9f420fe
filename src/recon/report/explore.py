"""The findings explorer of report.html: every finding of the run as inline JSON, searched,
filtered, sorted and paged in the page itself by `explore.js` (no server, no CDN).

The data is columnar (one array per column; names, states, currencies and run ids as
indices into short lists). Each finding carries its amount twice: the exact integer in minor
units as a string (the page sorts with `BigInt`, never by parsing the formatted text) and
the text people read, made here by `format_amounts` with the currency's ISO 4217 exponent.
The JSON sits in a `<script type="application/json">` block with `<`, `>`, `&`, U+2028 and
U+2029 written as `\\uXXXX`, so no text from the API can close the block or start markup.
Above `EXPLORE_MAX` findings the page does not embed them and says where they are instead.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]
from markupsafe import Markup

from recon.money.currency import currency_exponent
from recon.money.fx import Rates
from recon.money.shown import format_amounts, is_iso_currency
from recon.report.data import CheckRow

__all__ = ["EXPLORE_MAX", "Explorer", "build_explorer", "json_for_script"]

# Findings embedded in report.html at most. 100,000 render in about a second in headless
# Chromium (benchmarks/report_bench.py) and make a ~20 MB page; but the page is made in the
# night's process, which peaked over its 600 MB with 130k findings embedded (issue 38): past
# this the page lists the largest per check and currency and points at findings.parquet /
# findings.csv / `recon findings list` / the Excel export instead.
EXPLORE_MAX = 50_000
_SCRIPT = Path(__file__).parent / "templates" / "explore.js"
_STATES = ("new", "open", "resolved")
NO_CURRENCY = "-"  # the currency filter's value for findings without a currency
_SEVERITIES = ("error", "warn", "info")
_WORK = ("open", "investigating", "acknowledged", "resolved_manually")
NO_OWNER = "-"  # the owner filter's value for findings nobody is assigned


@dataclass(frozen=True)
class Option:
    """One entry of a filter's drop-down: the value the script filters on, and its label."""

    value: str
    label: str
    count: int


@dataclass(frozen=True)
class FxView:
    """The exchange rates the page may order by: their base currency and day."""

    base: str
    day: str


@dataclass(frozen=True)
class Explorer:
    """What report.html needs to show the explorer (or to say why it is not there)."""

    total: int
    limit: int
    data: Markup | None  # None when the run has more than `limit` findings
    options: dict[str, list[Option]]
    fx: FxView | None = None  # the user's exchange rates, when given (RECON_FX_RATES)

    @property
    def embedded(self) -> bool:
        return self.data is not None


def json_for_script(value: Any) -> Markup:
    """`value` as JSON that is safe between `<script type="application/json">` tags."""
    raw = orjson.dumps(value)
    for char, escaped in (
        (b"<", b"\\u003c"),
        (b">", b"\\u003e"),
        (b"&", b"\\u0026"),
        ("\u2028".encode(), b"\\u2028"),
        ("\u2029".encode(), b"\\u2029"),
    ):
        raw = raw.replace(char, escaped)
    return Markup(raw.decode("utf-8"))  # noqa: S704 - every markup character is escaped above


@functools.cache
def script() -> tuple[Markup, str]:
    """The explorer's code and its CSP hash (`sha256-…`), so the page allows only that."""
    code = _SCRIPT.read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
    return Markup(code), f"sha256-{digest}"  # noqa: S704 - our own file, not data


def _exponent(code: str | None) -> int:
    """The exponent the page's amount order uses: codes that are not ISO 4217 are shown
    unscaled, so they sort by the number shown (exponent 0)."""
    if not code or not is_iso_currency(code):
        return 0
    return currency_exponent(code) or 0


def _encode(column: pa.ChunkedArray) -> tuple[list[str], list[int | None]]:
    plain = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    encoded = pc.dictionary_encode(plain)
    return encoded.dictionary.to_pylist(), encoded.indices.to_pylist()


def _ordered(values: list[str], first: tuple[str, ...]) -> list[str]:
    return [v for v in first if v in values] + sorted(v for v in values if v not in first)


def build_explorer(
    findings: pa.Table,
    checks: list[CheckRow],
    limit: int = EXPLORE_MAX,
    rates: Rates | None = None,
) -> Explorer:
    """The explorer's data from the run's findings (already scrubbed of personal data);
    with `rates`, the page may also order by amounts converted to their base (labelled)."""
    total = findings.num_rows
    by_check = {c.check_name: c for c in checks}
    counts: dict[str, dict[str, int]] = {}
    for name in ("check_name", "severity", "state", "currency", "work_state", "owner"):
        vc = pc.value_counts(findings.column(name)).to_pylist() if total else []
        # a finding without a currency (an owner) is filtered as NO_CURRENCY (NO_OWNER)
        counts[name] = {d["values"] or NO_CURRENCY: d["counts"] for d in vc}
    counts["work_state"].pop(NO_CURRENCY, None)  # resolved by the checks: no work state
    currencies = counts["currency"]
    options = {
        "check": [Option(c, c, n) for c, n in sorted(counts["check_name"].items())],
        "severity": [
            Option(s, s, counts["severity"][s])
            for s in _ordered(list(counts["severity"]), _SEVERITIES)
        ],
        "state": [
            Option(s, s, counts["state"][s]) for s in _ordered(list(counts["state"]), _STATES)
        ],
        "currency": [
            Option(c, "no currency" if c == NO_CURRENCY else c, currencies[c])
            for c in sorted(currencies, key=lambda c: (c == NO_CURRENCY, c))
        ],
        "work": [
            Option(w, w.replace("_", " "), counts["work_state"][w])
            for w in _ordered(list(counts["work_state"]), _WORK)
        ],
        "owner": [
            Option(o, "nobody" if o == NO_CURRENCY else o, counts["owner"][o])
            for o in sorted(counts["owner"], key=lambda o: (o == NO_CURRENCY, o))
        ],
    }
    if total > limit:
        return Explorer(total=total, limit=limit, data=None, options=options)

    dictionaries: dict[str, list[str]] = {}
    columns: dict[str, list[Any]] = {}
    for name, key in (
        ("check_name", "check"),
        ("severity", "sev"),
        ("state", "state"),
        ("entity", "entity"),
        ("issue_type", "issue"),
        ("currency", "cur"),
        ("first_seen_run", "first"),
        ("work_state", "work"),
        ("owner", "owner"),
    ):
        dictionaries[name], columns[key] = _encode(findings.column(name))
    codes = dictionaries["currency"]
    amounts = findings.column("amount_minor")
    columns["id"] = findings.column("entity_id").to_pylist()
    # exact integers as text: JSON numbers past 2**53 would lose digits in the browser
    columns["minor"] = pc.cast(amounts, pa.string()).to_pylist()
    # the text people read, formatted per currency (one exponent each)
    text: list[str] = [""] * total
    by_currency: dict[int | None, list[int]] = {}
    for i, cur in enumerate(columns["cur"]):
        by_currency.setdefault(cur, []).append(i)
    minor = amounts.to_pylist()
    for cur, rows in by_currency.items():
        formatted = format_amounts([minor[i] for i in rows], None if cur is None else codes[cur])
        for i, value in zip(rows, formatted, strict=True):
            text[i] = value
    columns["text"] = text
    columns["age"] = findings.column("age_days").to_pylist()
    columns["detail"] = findings.column("detail").to_pylist()
    columns["lapsed"] = findings.column("lapsed_reason").to_pylist()
    notes = []
    for name in dictionaries["check_name"]:
        check = by_check.get(name)
        status = check.status if check else None
        notes.append(
            f"{status.replace('_', ' ')} tonight: findings carried over from the last evaluation"
            if status in ("not_evaluated", "errored")
            else ""
        )
    payload = {
        "checks": dictionaries["check_name"],
        "checkNotes": notes,
        "severities": dictionaries["severity"],
        "states": dictionaries["state"],
        "entities": dictionaries["entity"],
        "issues": dictionaries["issue_type"],
        "currencies": codes,
        "exponents": [_exponent(c) for c in codes],
        "firstSeen": dictionaries["first_seen_run"],
        "works": dictionaries["work_state"],
        "owners": dictionaries["owner"],
        "n": total,
        "col": columns,
    }
    fx = None
    if rates is not None:
        day = max(d for _, d in rates.rates.values()).isoformat()
        fx = FxView(rates.base, day)
        payload["fx"] = {
            "base": rates.base,
            "digits": currency_exponent(rates.base) or 0,
            # display and ordering only: a float is fine here, never for money kept
            "rates": [float(rates.rates[c][0]) if c in rates.rates else None for c in codes],
        }
    return Explorer(total=total, limit=limit, data=json_for_script(payload), options=options, fx=fx)
