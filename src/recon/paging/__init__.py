"""Paging that loses nothing, without I/O: strategies (`paginators`) and the loop (`scan`).

A `Scan` is handed a `fetch` function (the HTTP client supplies one) and a paginator (the
resource catalogue names its class), so paging can be tested and reasoned about alone.
"""

from recon.paging.idscan import IdScan
from recon.paging.paginators import BasePaginator, NextOffsetPaginator, OffsetPaginator
from recon.paging.recent import RecentIds
from recon.paging.scan import FailedPage, FetchedPage, Page, Scan, ScanReport

__all__ = [
    "BasePaginator",
    "FailedPage",
    "FetchedPage",
    "IdScan",
    "NextOffsetPaginator",
    "OffsetPaginator",
    "Page",
    "RecentIds",
    "Scan",
    "ScanReport",
]
