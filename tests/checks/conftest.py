from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .builder import Wh


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Wh]:
    """A fresh warehouse file with the real schema."""
    warehouse = Wh(tmp_path / "recon.duckdb")
    yield warehouse
    warehouse.close()
