"""The workbench's small JSON files beside the warehouse (users, saved views): read whole,
changed under an exclusive lock, written to a temporary name (mode 0600), fsync'd and renamed
over the file, so a reader never sees half of one and two writers never lose a change.

Not in the published warehouse: that file is replaced by rename at every publish and locked
by a running night."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from recon.errors import ConfigError

__all__ = ["JsonFile"]


class JsonFile:
    """One JSON object in a file; `valid(data)` says whether a file read is one recon wrote."""

    def __init__(
        self, path: Path, empty: Callable[[], dict[str, Any]], valid: Callable[[Any], bool]
    ) -> None:
        self.path = path
        self._empty = empty
        self._valid = valid

    def read(self) -> dict[str, Any]:
        """The file's object (an empty one when there is no file)."""
        try:
            data = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return self._empty()
        except orjson.JSONDecodeError:
            raise ConfigError(str(self.path), "is not a file recon wrote") from None
        if not isinstance(data, dict) or not self._valid(data):
            raise ConfigError(str(self.path), "is not a file recon wrote")
        return data

    @contextlib.contextmanager
    def changed(self) -> Iterator[dict[str, Any]]:
        """The file's object, to change in place; written back atomically when the block
        ends (not when it raises)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = self.read()
            yield data
            tmp = self.path.with_name(self.path.name + ".tmp")
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(out, orjson.dumps(data, option=orjson.OPT_INDENT_2))
                os.fsync(out)
            finally:
                os.close(out)
            os.replace(tmp, self.path)
        finally:
            os.close(fd)
