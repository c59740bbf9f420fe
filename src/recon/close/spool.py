"""Rows kept on disk, not in memory: the close pack's long lists (issue 38).

A close at a million findings lists a million roll-forward items and as many open ones; as
Arrow tables in memory, with the team's decisions beside them, they held most of the 1.4 GB
the close peaked at. `SpooledTable.write` takes record batches as DuckDB gives them, shapes
each (`shape`: the work columns, personal data scrubbed) and writes it to a Parquet file in
the temporary folder; the pack then reads them back a batch at a time into close.xlsx, and
the first rows for close.html. The file goes when the table is garbage (or at `close()`).

It reads like the Arrow table it replaces where the pack, the workbench and the tests read
one: `num_rows`, `schema`, `column_names`, `slice(offset, length)`, `column(name)`,
`to_pylist()`, `to_batches()`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

__all__ = ["BATCH_ROWS", "SpooledTable"]

#: Rows read from DuckDB, shaped and written at a time; and read back at a time.
BATCH_ROWS = 20_000


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class SpooledTable:
    """A table in a temporary Parquet file (see the module docstring)."""

    def __init__(self, path: Path, schema: pa.Schema, num_rows: int) -> None:
        self.path = path
        self.schema = schema
        self.num_rows = num_rows
        self._gone = weakref.finalize(self, _remove, str(path))

    @classmethod
    def write(
        cls,
        batches: Iterable[pa.RecordBatch],
        schema: pa.Schema,
        shape: Callable[[pa.Table], pa.Table] | None = None,
    ) -> SpooledTable:
        """Spool `batches` (of `schema`), each shaped by `shape` first."""
        shape = shape or (lambda t: t)
        out_schema = shape(schema.empty_table()).schema
        fd, name = tempfile.mkstemp(prefix="recon-close-", suffix=".parquet")
        os.close(fd)
        rows = 0
        try:
            with pq.ParquetWriter(name, out_schema) as writer:
                for batch in batches:
                    if not batch.num_rows:
                        continue
                    table = shape(pa.Table.from_batches([batch], schema=schema))
                    if table.schema != out_schema:
                        table = table.cast(out_schema)
                    writer.write_table(table)
                    rows += table.num_rows
        except BaseException:
            _remove(name)
            raise
        return cls(Path(name), out_schema, rows)

    @classmethod
    def of(cls, table: pa.Table) -> SpooledTable:
        """`table` spooled as it is."""
        return cls.write(table.to_batches(max_chunksize=BATCH_ROWS), table.schema)

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    def to_batches(self, max_chunksize: int | None = None) -> Iterator[pa.RecordBatch]:
        """The rows a batch at a time (at most `max_chunksize` rows each), in order."""
        if not self.num_rows:
            return
        with pq.ParquetFile(self.path) as file:
            yield from file.iter_batches(batch_size=max_chunksize or BATCH_ROWS)

    def slice(self, offset: int = 0, length: int | None = None) -> pa.Table:
        """Rows `offset` … `offset + length` as an Arrow table (only those read)."""
        end = self.num_rows if length is None else min(self.num_rows, offset + length)
        kept: list[pa.RecordBatch] = []
        seen = 0
        for batch in self.to_batches():
            if seen >= end:
                break
            lo, hi = max(offset - seen, 0), min(end - seen, batch.num_rows)
            if hi > lo:
                kept.append(batch.slice(lo, hi - lo))
            seen += batch.num_rows
        return pa.Table.from_batches(kept, schema=self.schema)

    def read(self) -> pa.Table:
        """Every row, in memory: for small tables and tests."""
        return self.slice(0)

    def column(self, name: str) -> pa.ChunkedArray:
        """One column, whole."""
        if not self.num_rows:
            return self.schema.empty_table().column(name)
        return pq.read_table(self.path, columns=[name]).column(name)

    def to_pylist(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.read().to_pylist()
        return rows

    def close(self) -> None:
        """Remove the file now."""
        self._gone()
