"""The real service on a free loopback port with the demo corpus, as `serve --dev` runs it: for
the browser tests, the page timing and the screenshots."""

import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.harness.loopback import free_port

# Ten searches on the demo corpus as a user types them: the page timing's (bench.surfaces.page),
# and the real queries the strong-match floor was weighed on (bench.quality.strong_matches).
PAGE_QUERIES = [
    "quarterly budget",
    "garden",
    "telescope observing night",
    "kubernetes outage",
    "onboarding checklist",
    "travel plans",
    "security audit findings",
    "recipe with eggs",
    "database migration",
    "customer escalation",
]
SIGNED_IN_LINK = re.compile(r"Search page, signed in: (http://\S+#token=(\S+))")


@dataclass(frozen=True)
class DemoServer:
    base: str  # http://127.0.0.1:<port>
    token: str  # the dev token `serve --dev` printed
    link: str  # the printed link that opens /viz signed in


def _environment(data_dir: Path) -> dict[str, str]:
    """This machine's environment without any SEARCH_* setting but the data directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCH_")}
    return env | {"SEARCH_DATA_DIR": str(data_dir)}


def load_demo(data_dir: Path) -> None:
    """`astrolabe-search demo`: the 300 documents through the real model."""
    subprocess.run(
        [sys.executable, "-m", "app", "demo"],
        env=_environment(data_dir),
        check=True,
        capture_output=True,
        timeout=900,
    )


@contextmanager
def demo_server(
    data_dir: Path, ready_timeout: float = 180, env: dict[str, str] | None = None
) -> Iterator[DemoServer]:
    """`serve --dev` on the loaded data directory (with `env`'s settings besides); yields once
    /readyz answers 200."""
    port = free_port()
    log_path = data_dir.parent / f"serve-{port}.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--dev", "--port", str(port)],
            env=_environment(data_dir) | (env or {}),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            server = _wait_until_ready(process, log_path, port, ready_timeout)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=30)


@contextmanager
def running_demo(data_dir: Path) -> Iterator[DemoServer]:
    """The demo ASTROLABE_DEMO="<base URL> <token>" names (one already running), else a fresh
    one: the corpus loaded into `data_dir`, then served."""
    given = os.environ.get("ASTROLABE_DEMO", "").split()
    if len(given) == 2:
        base, token = given
        yield DemoServer(base=base, token=token, link=f"{base}/viz#token={token}")
        return
    load_demo(data_dir)
    with demo_server(data_dir) as server:
        yield server


def _wait_until_ready(
    process: subprocess.Popen[bytes], log_path: Path, port: int, timeout: float
) -> DemoServer:
    deadline = time.monotonic() + timeout
    base = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve exited: {log_path.read_text()}")
        found = SIGNED_IN_LINK.search(log_path.read_text())
        if found and _ready(base):
            return DemoServer(base=base, token=found.group(2), link=found.group(1))
        time.sleep(0.5)
    raise TimeoutError(f"serve not ready in {timeout} s: {log_path.read_text()}")


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
