"""What the sandbox serves is pinned: a refactoring that changes one byte fails here.

The digests were taken before the sandbox's modules were split (issue 10) and must not move
unless the served data or answers change on purpose (then re-run
`.venv/bin/python -m tests.sandbox.sandbox_snapshot` and say why in the commit).
"""

from __future__ import annotations

import pytest

from .sandbox_snapshot import CASES, digest

PINNED = {
    (3, 300): "fdde0162251caf9e91ce8ec9a69106a6fe656b3458685d3c92db807514ed32a1",
    (7, 300): "dd4dcc6eb5751f26620b30ab953ebd08f0d773e1ac7c971b7a509b90b4581807",
    (11, 300): "4d47acc3a69319c435dad27f25180f6f6c8e086fa5b9b33a985b2efffb9378ff",
    (3, 2000): "0f0c55f18e9c54fd27cb65df8f693fd027fc745b945cee9950291ca90412c0ea",
    (7, 2000): "7c099263575f240e84a9cf63030ca593d0f98f2f754fc53e4775a8e3b28f3d14",
    (11, 2000): "fd7689dc7ee281e2cfd94c9a6b0a0fe0178bf6a39f882b897902f0f82efee8ad",
}


@pytest.mark.parametrize(("seed", "payments"), CASES)
def test_served_bytes_match_the_pinned_digest(seed: int, payments: int) -> None:
    assert digest(seed, payments) == PINNED[(seed, payments)]
