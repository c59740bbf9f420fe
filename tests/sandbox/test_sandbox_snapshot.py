"""What the sandbox serves is pinned: a refactoring that changes one byte fails here.

The digests were taken before the sandbox's modules were split (issue 10) and must not move
unless the served data or answers change on purpose (then re-run
`.venv/bin/python -m tests.sandbox.sandbox_snapshot` and say why in the commit).
"""

from __future__ import annotations

import pytest

from .sandbox_snapshot import CASES, digest

PINNED = {
    (3, 300): "07788d2aed015d12acc7fafd581df2f9283494b1e4ef1365c40b38702b13cb3c",
    (7, 300): "e85bb04fdf1567229567c76ff6bba7a523a890d3961d618fc5c5ca097e83f5d5",
    (11, 300): "dc8d566db7b4f4d805561189349097bb883ff8d801b2415fa674c2c6827bc23f",
    (3, 2000): "cec484e4fe77277afb885ecd6ecab0033e9d210be19752d6672e0123c93626f1",
    (7, 2000): "14056f3df7af5a9c994292d0677b647c5e714b97e053945f75c2e0c29d8b3f1e",
    (11, 2000): "66e02df23fa0c0e716aba5634bda70c2b7529538f6901c68d8f9d625df5b087e",
}


@pytest.mark.parametrize(("seed", "payments"), CASES)
def test_served_bytes_match_the_pinned_digest(seed: int, payments: int) -> None:
    assert digest(seed, payments) == PINNED[(seed, payments)]
