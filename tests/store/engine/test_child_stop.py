"""An engine process stops on SIGTERM whichever of its threads the kernel hands the signal to
(Python runs the handler in the main thread, and only when that thread runs again)."""

import ctypes
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from app.store.engine.launch import Launcher


def _thread_ids(pid: int) -> list[int]:
    return sorted(int(task) for task in os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux: threads in /proc")
def test_a_sigterm_taken_by_another_thread_stops_the_engine_process(tmp_path: Path) -> None:
    launcher = Launcher.new(tmp_path / "data", "astrolabe", 0)
    process = launcher.launch(launcher.socket(1))
    try:
        assert process.stdout is not None
        lines = [json.loads(process.stdout.readline())]  # {"opened": ...}
        lines.append(json.loads(process.stdout.readline()))
        assert "ready" in lines[-1], lines
    except BaseException:
        process.kill()
        raise
    try:
        other = next(tid for tid in _thread_ids(process.pid) if tid != process.pid)
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.tgkill(process.pid, other, signal.SIGTERM) == 0, ctypes.get_errno()
        assert process.wait(timeout=10) == 0
    except subprocess.TimeoutExpired:
        pytest.fail("the engine process ignored a SIGTERM taken by one of its other threads")
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
