"""What a scan remembers of the records it read (`SeenRecords`): the ids seen lately, to drop
a record met again (inserts while paging shift records onto the next page), and what each
looked like, so that the same id answered again with other content is counted and named
(`ScanReport.changed`, issue 38) instead of deduplicated away in silence. The loop that
pages (`recon.paging.scan.Scan`) asks it for each page's new records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from recon.paging.pages import ScanReport
from recon.paging.paginators import record_id
from recon.paging.recent import RecentIds, RecentPrints
from recon.paging.records import Landable, RawRecords, json_text

__all__ = ["RECENT_WINDOW", "SeenRecords", "changed_reason"]

#: Ids a scan remembers (two generations: 25,000-50,000, i.e. 125-250 pages of 200): far
#: more than the pages in flight and a step back need; an older duplicate is collapsed by
#: the loader. Was 100,000: with six lists paged at once, two such sets each held ~150 MB
#: at 1M payments (issue 23).
RECENT_WINDOW = 25_000

#: Ids named in the reason of a list whose records changed while it was read.
_CHANGED_NAMED = 5


class SeenRecords:
    """The ids a scan has seen lately (`ids`, started with the ids of a resumed scan) and
    their fingerprints; a changed record is counted in `report`."""

    def __init__(
        self, report: ScanReport, window: int = RECENT_WINDOW, seen_ids: Iterable[str] = ()
    ) -> None:
        self.ids = RecentIds(window, seen_ids)
        # What each id recently seen looked like: the same id answered again with other
        # content is never deduplicated away in silence (issue 38)
        self._prints = RecentPrints(window)
        self._report = report

    def dedupe(
        self, data: list[Any], landable: Landable | None = None
    ) -> tuple[list[dict[str, Any]], list[str], int, int, Landable | None]:
        """The records not seen before (remembered now), all keyed ids, duplicates, unkeyed,
        and the new records' `Landable` (taken from the page's: None if it has none)."""
        seen = self.ids
        current, previous = seen.current, seen.previous
        if landable is not None and len(landable) == len(data):
            keys = landable.ids
        else:
            landable = None
            keys = [record_id(record) for record in data]
        page: frozenset[str] | set[str] | None = None
        if landable is not None:
            page = landable.id_set
        elif None not in keys:
            page = set(cast("list[str]", keys))
        if page is not None:  # every record keyed: set operations, no loop in Python
            keyed = cast("list[str]", keys)
            if len(page) == len(keyed):  # no id twice on the page
                known = page & current
                if previous:
                    known |= page & previous
                current |= page - known if known else page
                seen.rotate()
                prints = _prints(data, landable)
                if prints is not None:
                    if known:
                        self._compare(known, keyed, prints)
                    self._prints.update(keyed, prints)
                if not known:  # nothing seen before
                    return data, keyed, 0, 0, landable
                # usually the one record of overlap the page was asked to start with
                if len(known) == 1 and keyed[0] in known:
                    keep = list(range(1, len(keyed)))
                else:
                    keep = [i for i, rid in enumerate(keyed) if rid not in known]
                new, landable = _subset(data, landable, keep)
                return new, keyed, len(known), 0, landable
        new_at: list[int] = []
        ids: list[str] = []
        duplicates = 0
        unkeyed = 0
        prints = _prints(data, landable)
        for i, rid in enumerate(keys):  # the hot loop of a scan: kept flat on purpose
            if rid is None:
                unkeyed += 1
                new_at.append(i)
                continue
            ids.append(rid)
            if rid in current or rid in previous:
                duplicates += 1
                if prints is not None:
                    self._compare((rid,), keys, prints, at=i)
            else:
                current.add(rid)
                new_at.append(i)
            if prints is not None:
                self._prints.update((rid,), (prints[i],))
        seen.rotate()
        if len(new_at) == len(data):
            return data, ids, duplicates, unkeyed, landable
        new, landable = _subset(data, landable, new_at)
        return new, ids, duplicates, unkeyed, landable

    def _compare(
        self,
        known: Iterable[str],
        keys: Sequence[str | None],
        prints: Sequence[int],
        *,
        at: int | None = None,
    ) -> None:
        """Note each of the `known` ids (read before) whose record on this page (`keys`,
        `prints`; at `at` when given) is not what it was: the first version is kept."""
        for rid in known:
            before = self._prints.get(rid)
            now = prints[keys.index(rid) if at is None else at]
            if before is not None and before != now:
                self._report.changed += 1
                if len(self._report.changed_ids) < _CHANGED_NAMED:
                    self._report.changed_ids.append(rid)


def changed_reason(count: int, ids: Sequence[str]) -> str:
    named = ", ".join(ids) + (f" and {count - len(ids)} more" if count > len(ids) else "")
    return (
        f"{count} record(s) answered twice with different content ({named}): the list "
        "changed while it was read, or the provider is inconsistent; the first version "
        "was kept — run the night again for a consistent read"
    )


def _prints(data: Sequence[Any], landable: Landable | None) -> list[int] | None:
    """Each record's fingerprint: the hash of its JSON text as sent (`RawRecords`), or of
    the record written to JSON (a plain list, as tests give). None for a page that was
    parsed whole and written back (a body `read_list` could not read): its text is not
    what the provider sent, so it is compared with nothing."""
    if isinstance(data, RawRecords):
        return data.landable.prints()
    if landable is None:
        return [hash(json_text(record)) for record in data]
    return None


def _subset(
    data: list[Any], landable: Landable | None, keep: list[int]
) -> tuple[list[Any], Landable | None]:
    """The records at the positions `keep` (increasing), and their `Landable`."""
    if isinstance(data, RawRecords):  # records as sent: their text is their `Landable`
        part = data.select(keep)
        return part, part.landable
    if keep and keep[-1] - keep[0] + 1 == len(keep):  # one run (a page after its overlap)
        new = data[keep[0] : keep[-1] + 1]
    else:
        new = [data[i] for i in keep]
    return new, landable.select(keep) if landable is not None else None
