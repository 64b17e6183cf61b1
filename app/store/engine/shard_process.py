"""A handle to one shard server's process: its stdout lines followed in a thread (opened, ready,
or why it failed), its control connection, and how it is stopped or killed."""

import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any

from app.store import errors
from app.store.engine.wire import PROTOCOL, Call, Control, Failure, raise_failure

STOP_WAIT_S = 30.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class ShardProcess:
    """A handle to one child running a shard server (`python -m app.engine_child`); its stdout
    lines say where it stands."""

    process: subprocess.Popen[str]
    socket: str
    key: bytes
    copy: Path | None = None  # a rebuild's copy; None: the generation in use
    opened: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)
    error: str | None = None
    error_kind: str = "StoreError"
    _control: Connection | None = None

    @classmethod
    def watch(
        cls, process: "subprocess.Popen[str]", socket: str, key: bytes, copy: Path | None = None
    ) -> "ShardProcess":
        """Follow a launched child (`launch`) through its stdout lines."""
        engine = cls(process, socket, key, copy)
        threading.Thread(target=engine._read_lines, name="engine-lines", daemon=True).start()
        return engine

    def _read_lines(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if "opened" in said:
                self.opened.set()
            elif "ready" in said:
                self.ready.set()
            elif "error" in said:
                self.error_kind, self.error = str(said["error"]), str(said["message"])
        self.process.stdout.close()
        if self.error is None:
            self.error = f"the engine process exited ({self.process.wait()})"
        self.opened.set()  # whoever waits for it learns of the failure
        self.ready.set()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_opened(self) -> None:
        """Returns once the shard is open; raises the engine's refusal as the store error it
        was (a data directory in use or unusable: `serve` exits with one line)."""
        self.opened.wait()
        if self.error is not None:
            raise_failure(Failure(self.error_kind, self.error))

    def control(self, method: str, *args: Any) -> Any:
        if self._control is None:
            self._control = Client(self.socket, "AF_UNIX", authkey=self.key)
            self._control.send(Call(Control.HELLO, (PROTOCOL,)))
            self._control.recv()
        self._control.send(Call(method, args))
        reply = self._control.recv()
        if isinstance(reply, Failure):
            raise_failure(reply)
        return reply

    def stop(self, keep_facets: bool = True) -> None:
        """Ask it to close its shard and exit (SIGTERM before it listens); kill it if it does
        not within STOP_WAIT_S."""
        try:
            if self.alive and self.ready.is_set() and self.error is None:
                self.control(Control.SHUTDOWN, keep_facets)
            elif self.alive:
                self.process.terminate()
        except (OSError, EOFError, errors.StoreError):
            pass
        try:
            self.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_control()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._close_control()

    def _close_control(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None


def resident_bytes(pid: int) -> int | None:
    """None once the process has gone."""
    try:
        pages = Path(f"/proc/{pid}/statm").read_text().split()[1]
    except (OSError, IndexError):
        return None
    return int(pages) * PAGE_SIZE
