"""Exports, end to end through `recon export` on a real night's warehouse.

Pass: formula-injection cells are neutralised in text columns only (negative amounts stay
numbers); with an allowed root configured (RECON_EXPORT_ROOT), an output path outside it is
refused (exit 2, nothing written);
a filter value like `x' OR '1'='1` or one calling `read_text(...)`, bound with --param,
returns nothing and reads no file; a query reading a file is refused. The unit tests of
every rule are in tests/analyst/test_export.py.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import ClassVar

import duckdb
import pytest
from typer.testing import CliRunner

from recon.cli import app
from recon.night import nightly as steps

from .conftest import overrides_for, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.slow]

runner = CliRunner()
FORMULAS = {
    '=HYPERLINK("http://evil.test","x")': '\'=HYPERLINK("http://evil.test","x")',
    "+SUM(A1:A9)": "'+SUM(A1:A9)",
    "-2+3": "'-2+3",
    "@cmd|' /C calc'!A0": "'@cmd|' /C calc'!A0",
    "\tTAB": "'\tTAB",
}


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published warehouse of one night, with formula-like references planted in it."""
    tmp = tmp_path_factory.mktemp("exports")
    with pytest.MonkeyPatch.context() as mp:
        from tests.night.conftest import KEY, TOKEN

        mp.setenv("RECON_API_KEY", KEY)
        mp.setenv("RECON_BEARER_TOKEN", TOKEN)
        with sandbox(seed=14, payments=600) as url:
            summary = steps.run_local(overrides_for(tmp, url))
    db = tmp / "planted.duckdb"
    shutil.copy(summary.db_path, db)
    con = duckdb.connect(str(db))
    ids = [r[0] for r in con.execute("SELECT id FROM payments ORDER BY id LIMIT 5").fetchall()]
    for pid, value in zip(ids, FORMULAS, strict=True):
        con.execute("UPDATE payments SET reference = ? WHERE id = ?", [value, pid])
    con.close()
    return db


def _export(cwd: Path, db: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["export", *args, "--db", str(db)], env={"PWD": str(cwd)})
    return result.exit_code, result.output


def test_exports_neutralise_formulas_in_text_columns_only(
    night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _export(tmp_path, night, "payments.csv", "--table", "payments")
    assert code == 0, out
    with (tmp_path / "payments.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    refs = {r["reference"] for r in rows}
    for planted, safe in FORMULAS.items():
        assert safe in refs, planted
        assert planted not in refs
    negative = [r for r in rows if r["amount_minor"].startswith("-")]
    assert negative  # the sandbox plants negative amounts: they stay numbers
    assert all(r["amount_minor"].lstrip("-").isdigit() for r in negative)


@pytest.mark.parametrize("out", ["../escape.csv", "/tmp/recon-reliability-escape.csv"])
def test_exports_refuse_path_traversal(
    night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("RECON_EXPORT_ROOT", str(work))
    code, text = _export(work, night, out, "--table", "payments")
    assert code == 2, text
    assert "out" in text
    assert not (tmp_path / "escape.csv").exists()
    assert not Path("/tmp/recon-reliability-escape.csv").exists()


def test_exports_bind_filter_values_and_read_no_file(
    night: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("CANARY-FILE-CONTENT-5b1e\n")
    query = "SELECT id, reference FROM payments WHERE reference = $ref OR id = $ref"
    for i, value in enumerate(
        ["x' OR '1'='1", f"read_text('{secret}')", "'); SELECT * FROM read_text('/etc/passwd"]
    ):
        code, out = _export(
            tmp_path, night, f"q{i}.csv", "--query", query, "--param", f"ref={value}"
        )
        assert code == 0, out
        text = (tmp_path / f"q{i}.csv").read_text(encoding="utf-8-sig")
        assert text.splitlines() == ['"id","reference"'], text  # header only: nothing matched
        assert "CANARY-FILE-CONTENT" not in text
        assert "root:" not in text
    code, out = _export(
        tmp_path, night, "file.csv", "--query", f"SELECT * FROM read_text('{secret}')"
    )
    assert code == 2
    assert "CANARY-FILE-CONTENT" not in out
    assert not (tmp_path / "file.csv").exists()


class Hostile:
    """ASGI wrapper: one payments page fails for good with a hostile message, and the first
    refunds page carries a refund whose id and status are a formula and a script."""

    MESSAGE = '=HYPERLINK("http://evil.test","click") <script>alert(1)</script>'
    RECORD: ClassVar[dict[str, object]] = {
        "id": "=2+3",
        "paymentId": "+pay_x",
        "amount": {"amountMinor": 100, "currency": "EUR"},
        "status": "<script>alert('status')</script>",
        "createdAt": "2026-11-19T00:00:00Z",
    }

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.failing: str | None = None  # the second payments page's query, whatever its skip

    async def __call__(self, scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        import orjson

        query = scope.get("query_string", b"").decode().split("&")
        if scope["type"] == "http" and scope["path"] in ("/api/v1/payments", "/api/v1/refunds"):
            second = scope["path"] == "/api/v1/payments" and "skip=0" not in query
            if second and self.failing is None:
                self.failing = "&".join(query)
            if second and "&".join(query) == self.failing:
                body = orjson.dumps(
                    {"error": "unavailable", "message": self.MESSAGE, "requestId": "=req"}
                )
                await send(  # type: ignore[operator]
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"x-request-id", b"=req"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})  # type: ignore[operator]
                return
            if "skip=0" in query and scope["path"] == "/api/v1/refunds":
                chunks: list[bytes] = []
                start: dict = {}  # type: ignore[type-arg]

                async def capture(message: dict) -> None:  # type: ignore[type-arg]
                    if message["type"] == "http.response.start":
                        start.update(message)
                    else:
                        chunks.append(message.get("body", b""))

                await self.inner(scope, receive, capture)  # type: ignore[operator]
                doc = orjson.loads(b"".join(chunks))
                doc["data"] = [self.RECORD, *doc["data"][1:]]  # same length as asked
                body = orjson.dumps(doc)
                headers = [(k, v) for k, v in start["headers"] if k != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({**start, "headers": headers})  # type: ignore[operator]
                await send({"type": "http.response.body", "body": body})  # type: ignore[operator]
                return
        await self.inner(scope, receive, send)  # type: ignore[operator]


def test_exports_report_files_neutralise_hostile_api_text(tmp_path: Path) -> None:
    """Text the API controls (ids, statuses, error messages, request ids) reaches the report's
    CSVs and HTML: formulas are neutralised there too and HTML is escaped."""
    from recon.sandbox.app import SandboxConfig, create_app
    from recon.sandbox.server import serve_app_in_thread
    from tests.night.conftest import KEY, TOKEN

    app = create_app(SandboxConfig(seed=15, payments=500, api_key=KEY, bearer_token=TOKEN))
    with serve_app_in_thread(Hostile(app)) as url:
        summary = steps.run_local(overrides_for(tmp_path, url))
    assert summary.status == "incomplete"
    folder = summary.report_dir
    assert folder is not None
    cells: list[str] = []
    for name in ("findings.csv", "failed_calls.csv"):
        with (folder / name).open(newline="") as fh:
            cells += [c for row in csv.reader(fh) for c in row]
    assert "'=2+3" in cells  # the hostile id, neutralised
    hostile = [c for c in cells if c.lstrip("'").startswith(("=", "+", "@"))]
    assert hostile
    assert all(c.startswith("'") for c in hostile), [c for c in hostile if c[0] != "'"]
    html = (folder / "report.html").read_text()
    # The hostile text is shown (escaped), never run: it is in the page, never as markup.
    assert "<script>alert" not in html
    assert html.count("alert") > 0
