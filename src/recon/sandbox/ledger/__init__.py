"""The merchant's books for a sandbox data set (`recon sandbox ledger`), with planted breaks,
and the ground truth of the ledger checks over them (`recon sandbox truth`'s `ledger`).

    books = make_books(Dataset(7, 1000))       # rows of orders, refunds, invoices; .planted
    write_books(books, Path("books"))          # orders.csv/.parquet/.xlsx, …
    ledger_truth(dataset, books, as_of=…)      # the findings the ledger checks must produce
"""

from recon.sandbox.ledger.books import make_books
from recon.sandbox.ledger.files import FORMATS, sandbox_books, write_books
from recon.sandbox.ledger.model import Books
from recon.sandbox.ledger.oracle import (
    LIST_CHECKS,
    MatchParams,
    ledger_links,
    ledger_truth,
    truth_part,
)

__all__ = [
    "FORMATS",
    "LIST_CHECKS",
    "Books",
    "MatchParams",
    "ledger_links",
    "ledger_truth",
    "make_books",
    "sandbox_books",
    "truth_part",
    "write_books",
]
