"""The search page in headless Chromium on the demo corpus: time from Enter to rendered results
(median of 10 queries) and the README's screenshots.

    python -m bench.page [--screenshots docs/screenshots]

Loads the demo into a temporary directory and starts `serve --dev` (or uses ASTROLABE_DEMO=
"<base URL> <token>" for a demo already running)."""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from bench.chromium import launch_chromium
from bench.demo_server import DemoServer, running_demo

QUERIES = [
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
WAIT_RENDERED = (
    "(b) => { const a = document.getElementById('app');"
    " return a.dataset.rendered && a.dataset.rendered !== b; }"
)
NEXT_PAINT = "() => new Promise((done) => requestAnimationFrame(() => done(performance.now())))"


def search(page: Page, query: str) -> float:
    """Milliseconds from the Enter key to the next paint after the results are in the page."""
    page.fill("#q", query)
    before = page.get_attribute("#app", "data-rendered")
    page.evaluate(
        "() => document.getElementById('q').addEventListener('keydown',"
        " () => { window.enterAt = performance.now(); }, {once: true, capture: true})"
    )
    page.press("#q", "Enter")
    page.wait_for_function(WAIT_RENDERED, arg=before, polling="raf")
    painted: float = page.evaluate(NEXT_PAINT)
    entered: float = page.evaluate("window.enterAt")
    return painted - entered


def measure(page: Page, server: DemoServer) -> list[float]:
    page.goto(server.link)
    page.wait_for_function(WAIT_RENDERED, arg=None)
    search(page, "warm up")  # the first query pays for the model's first call
    return [search(page, query) for query in QUERIES]


def screenshots(page: Page, server: DemoServer, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    page.goto(f"{server.base}/viz?query=quarterly%20budget&tags=finance#token={server.token}")
    page.wait_for_function(WAIT_RENDERED, arg=None)
    page.click('#folder-tree [data-twisty="/Finance"]')
    page.locator("#results .result .more button").first.click()
    page.wait_for_selector("#results .context")
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "search-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_function(WAIT_RENDERED, arg=None)
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "search-phone.png"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--screenshots", type=Path, help="write the README screenshots here")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_demo(Path(tmp) / "data") as server,
        sync_playwright() as playwright,
    ):
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        times = measure(page, server)
        print(
            f"Enter -> rendered results, {len(times)} queries on the demo corpus:"
            f" median {statistics.median(times):.0f} ms, min {min(times):.0f} ms,"
            f" max {max(times):.0f} ms ({time.perf_counter() - started:.1f} s in all)"
        )
        if args.screenshots:
            screenshots(page, server, args.screenshots)
            print(f"screenshots written to {args.screenshots}")
        browser.close()


if __name__ == "__main__":
    main()
