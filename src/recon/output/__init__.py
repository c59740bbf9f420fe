"""Files recon writes for people: atomic writes, spreadsheet-safe cells and CSV, Excel
workbooks, text with its control characters made visible."""
