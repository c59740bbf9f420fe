"""`findings list` (and the close) after a million acknowledgements held the trail's events
whole, 1.2 GB (issue 38). `work_events` now reads a stream and keeps a lean copy of each
key's latest event — the same states, without the chain's hashes, repeated values shared —
shown here on a few lines."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from recon.findings.acks import AckLog, Amounts
from recon.findings.work import judge, work_events


def test_the_latest_work_per_key_is_kept_lean_with_the_same_states(tmp_path: Path) -> None:
    log = AckLog(tmp_path / "recon.acks.jsonl", warehouse=None)
    at = datetime(2026, 11, 2, 9, tzinfo=UTC)
    eur = Amounts("EUR", 500, None)
    log.append("ack", [(f"k{i}", eur) for i in range(4)], note="bulk", who="ann", at=at)
    log.append("assign", [("k1", None)], note=None, owner="bo", who="ann", at=at)
    log.append("resolve", [("k2", eur)], note="paid", reason="timing", who="ann", at=at)
    log.append("unack", [("k3", None)], note="again", who="ann", at=at)

    whole = work_events(log.read())
    streamed = work_events(log.iter_events())
    today = date(2026, 11, 3)
    assert {k: judge(w, eur, today) for k, w in streamed.items()} == {
        k: judge(w, eur, today) for k, w in whole.items()
    }
    assert {k: (judge(w, eur, today)[0], w.owner) for k, w in streamed.items()} == {
        "k0": ("acknowledged", None),
        "k1": ("investigating", "bo"),
        "k2": ("resolved_manually", None),
        "k3": ("open", None),
    }
    kept = [w.event for w in streamed.values() if w.event is not None]
    assert all((e.line_hash, e.prev) == ("", None) for e in kept)  # the chain is not kept
    assert [e.seq for e in kept] == [1, 5, 6, 7]  # …but where each line stands is
    # one `who`, one stamp, one currency for every key, not one per line
    assert len({id(e.who) for e in kept}) == 1
    assert len({id(e.at) for e in kept}) == 1
    assert len({id(e.amounts.currency) for e in kept if e.amounts}) == 1
    assert not hasattr(kept[0], "__dict__")  # slotted events
