"""Headless Chromium (Debian's, never a downloaded build) and the demo service for page tests."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

from bench.chromium import CHROMIUM, launch_chromium
from bench.demo_server import DemoServer, running_demo

LOOPBACK = {"127.0.0.1"}


# Module scope, not session: Playwright's sync API keeps an event loop running until it stops,
# and later tests that call asyncio.run() (tests/mcp) must not find it.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            "browser tests need Debian's chromium at /usr/bin/chromium:"
            " run scripts/setup.sh as root, or `sudo apt-get install chromium`"
        )
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """One service with the demo corpus for a whole test module (loading takes minutes).
    ASTROLABE_DEMO="<base URL> <token>" points the tests at a demo already running instead."""
    with running_demo(tmp_path_factory.mktemp("demo") / "data") as server:
        yield server


@dataclass
class Watched:
    """A page plus what it did: console errors and every URL it requested."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def outside_requests(self) -> list[str]:
        return [
            url
            for url in self.requests
            if urlsplit(url).scheme not in {"data", "blob", "about"}
            and urlsplit(url).hostname not in LOOPBACK
        ]


def watch(page: Page) -> Watched:
    watched = Watched(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(f"{message.text} @ {message.location}")

    def on_request(request: Request) -> None:
        watched.requests.append(request.url)

    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.errors.append(f"page error: {error}"))
    page.on("request", on_request)
    return watched


def assert_clean(watched: Watched) -> None:
    assert watched.errors == [], watched.errors
    assert watched.outside_requests() == [], watched.outside_requests()
