"""The scan's memory of ids is bounded: recent ids are known, old ones are forgotten."""

from __future__ import annotations

from recon.paging.recent import RecentIds


def test_recent_ids_remember_between_one_and_two_windows() -> None:
    seen = RecentIds(window=3, initial=["a"])
    for ident in "bcdefg":
        seen.add(ident)
    assert "g" in seen
    assert "d" in seen  # still in the previous generation
    assert "a" not in seen  # forgotten: memory stays bounded
    assert 3 <= len(seen) <= 6


def test_memory_does_not_grow_with_the_list() -> None:
    seen = RecentIds(window=1000)
    seen.update(f"id{i}" for i in range(100_000))
    assert len(seen) <= 2000
