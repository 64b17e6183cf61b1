"""Headless Chromium (Debian's, never a downloaded build) and the demo service for page tests."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

from bench.harness.chromium import CHROMIUM, launch_chromium
from bench.harness.demo_server import DemoServer, running_demo

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


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """One service with the demo corpus for every page test (a subprocess: it outlives the
    modules' event loops; the tests only read it).
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


DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def opened(browser: Browser, demo: DemoServer) -> Iterator[Callable[..., Watched]]:
    """`opened(path)`: a fresh tab (no saved token) signed in through the URL fragment."""
    tabs: list[Watched] = []

    def open_page(path: str = "/viz", viewport: dict[str, int] = DESKTOP) -> Watched:
        context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        watched = watch(context.new_page())
        tabs.append(watched)
        done = rendered(watched.page)
        watched.page.goto(f"{demo.base}{path}#token={demo.token}")
        wait_search(watched.page, done)
        return watched

    yield open_page
    for watched in tabs:
        assert_clean(watched)
        watched.page.context.close()


def rendered(page: Page) -> str | None:
    if page.url.startswith("about:"):
        return None
    return page.get_attribute("#app", "data-rendered")


def wait_search(page: Page, before: str | None) -> None:
    """Until a search newer than `before` has been shown (results or error)."""
    page.wait_for_function(
        "(b) => { const a = document.getElementById('app');"
        " return a && a.dataset.rendered && a.dataset.rendered !== b; }",
        arg=before,
        timeout=30_000,
    )


def searched(page: Page, action: Callable[[], object]) -> None:
    before = rendered(page)
    action()
    wait_search(page, before)


def url_params(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def chips(page: Page) -> list[str]:
    texts: list[str] = page.locator("#chips li").evaluate_all(
        "items => items.map(i => i.querySelector('b').textContent + ' '"
        " + i.querySelector('span').textContent)"
    )
    return texts


def result_docs(page: Page) -> list[str]:
    return [
        d or ""
        for d in page.locator("#results li.result").evaluate_all(
            "items => items.map(i => i.dataset.doc)"
        )
    ]


def count_in(page: Page, picker: str, value: str) -> int:
    label = page.locator(f"#{picker} li", has=page.locator(f'input[data-value="{value}"]'))
    return int(label.locator(".count").inner_text().replace(",", ""))


def enter(page: Page, selector: str) -> Callable[[], None]:
    return lambda: page.press(selector, "Enter")


def viz_requests(watched: Watched) -> int:
    return sum("/viz/search" in url for url in watched.requests)


def typed(page: Page, text: str) -> None:
    """Type `text` into the focused box and wait until the search it makes has been shown."""
    page.keyboard.type(text)
    page.wait_for_timeout(100)  # past the typing wait
    page.wait_for_function("() => document.getElementById('app').dataset.idle === 'true'")
