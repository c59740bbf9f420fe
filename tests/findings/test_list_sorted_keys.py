"""`findings list` sorts only the rowids of the findings, then reads them a batch at a time in
that order (issue 38: a million findings sorted with their details ran out of a command's
64 MiB): the same findings in the same order, whatever the batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.findings.acks import acks_path
from recon.findings.listing import Filters, iter_findings

from .conftest import KEY_A, KEY_B, KEY_C, KEY_D


@pytest.mark.parametrize("order", [None, "severity", "amount"])
def test_batches_of_one_list_as_one_batch_does(
    db: Path, monkeypatch: pytest.MonkeyPatch, order: str | None
) -> None:
    def listed() -> list[tuple[str, str]]:
        found = iter_findings(db, acks_path(db), filters=Filters(), order=order)
        return [(f.finding_key, f.work_state) for f in found]

    whole = listed()
    monkeypatch.setattr("recon.findings.listing.BATCH_ROWS", 1)
    assert listed() == whole
    assert {k for k, _ in whole} == {KEY_A, KEY_B, KEY_C, KEY_D}
