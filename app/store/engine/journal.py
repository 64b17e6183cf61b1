"""The writes made to the served shard since a rebuild copied it, in the order they were applied:
what the rebuilt copy replays to catch up before it takes over. One record a write (the store
method and its arguments, pickled, length-prefixed); a reader only ever sees whole records."""

import pickle
import struct
from pathlib import Path
from typing import Any, BinaryIO

_LENGTH = struct.Struct("<I")
Write = tuple[str, tuple[Any, ...]]


class JournalWriter:
    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = path.open("wb")

    def append(self, method: str, args: tuple[Any, ...]) -> None:
        record = pickle.dumps((method, args), protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(_LENGTH.pack(len(record)) + record)
        self._file.flush()  # to the OS: a process killed now still leaves it for the reader

    def close(self) -> None:
        self._file.close()


class JournalReader:
    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = path.open("rb")
        self.records = 0  # read so far

    def read(self, up_to: int | None = None) -> list[Write]:
        """The whole records written since the last read (at most up to record `up_to`)."""
        found: list[Write] = []
        while up_to is None or self.records < up_to:
            start = self._file.tell()
            header = self._file.read(_LENGTH.size)
            if len(header) < _LENGTH.size:
                self._file.seek(start)
                break
            (length,) = _LENGTH.unpack(header)
            record = self._file.read(length)
            if len(record) < length:  # still being written
                self._file.seek(start)
                break
            found.append(pickle.loads(record))
            self.records += 1
        return found

    def close(self) -> None:
        self._file.close()
