"""The server's hold on the published warehouse: readers share it (a request reads while the
queue's snapshot is built), a writer (an action recording its trail line) is alone, may read
itself, and goes before readers that come after it."""

from __future__ import annotations

import threading

from recon.workbench.holding import Holding


def _in_thread(side: object, entered: threading.Event, leave: threading.Event) -> threading.Thread:
    def run() -> None:
        with side:  # type: ignore[attr-defined]
            entered.set()
            leave.wait(30)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_readers_share_and_a_writer_waits_for_them() -> None:
    holding = Holding()
    first_in, second_in, writer_in = threading.Event(), threading.Event(), threading.Event()
    leave_readers, leave_writer = threading.Event(), threading.Event()
    first = _in_thread(holding.read, first_in, leave_readers)
    assert first_in.wait(30)
    second = _in_thread(holding.read, second_in, leave_readers)
    assert second_in.wait(30)  # a second reader while the first reads (the snapshot's build)
    writer = _in_thread(holding.write, writer_in, leave_writer)
    assert not writer_in.wait(0.3)  # not while anyone reads
    late_in, leave_late = threading.Event(), threading.Event()
    late = _in_thread(holding.read, late_in, leave_late)
    leave_readers.set()
    assert writer_in.wait(30)
    assert not late_in.is_set()  # the waiting writer went first
    leave_writer.set()
    assert late_in.wait(30)
    leave_late.set()
    for thread in (first, second, writer, late):
        thread.join(30)


def test_the_writer_reads_and_writes_again_without_waiting_for_itself() -> None:
    holding = Holding()
    with holding.write, holding.read, holding.write, holding.read:
        pass
    with holding.read, holding.read:
        pass
    with holding.write:  # nothing left held
        pass
