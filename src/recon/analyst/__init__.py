"""The analysts' doors into the published warehouse: read-only queries, exports to
CSV/Parquet/Excel that are safe to open in a spreadsheet."""
