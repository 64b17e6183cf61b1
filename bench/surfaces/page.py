"""The search page in headless Chromium on the demo corpus: time from Enter to rendered results,
and from the last keystroke to rendered results (search as you type), medians of several rounds
of 10 queries; with `--baseline COMMIT`, the page of that commit in a second tab of the same
browser against the same service, interleaved query by query (an A/B that holds on a busy
machine); and the README's screenshots.

    python -m bench.surfaces.page [--rounds 5] [--baseline 8d6e2a6] [--screenshots docs/screenshots]

(`--rounds 0`: the screenshots only.)

Loads the demo into a temporary directory and starts `serve --dev` (or uses ASTROLABE_DEMO=
"<base URL> <token>" for a demo already running). Results: bench/results/page.json."""

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, Route, sync_playwright

from bench.harness import results
from bench.harness.chromium import launch_chromium
from bench.harness.demo_server import PAGE_QUERIES, DemoServer, running_demo

RESULTS = results.RESULTS / "page.json"
WAIT_RENDERED = (
    "(b) => { const a = document.getElementById('app');"
    " return a.dataset.rendered && a.dataset.rendered !== b; }"
)
NEXT_PAINT = "() => new Promise((done) => requestAnimationFrame(() => done(performance.now())))"
MARK_KEY = (
    "() => document.getElementById('q').addEventListener('keydown',"
    " () => { window.keyAt = performance.now(); }, {once: true, capture: true})"
)


def by_enter(page: Page, query: str) -> float:
    """Milliseconds from the Enter key to the next paint after the results are in the page."""
    page.fill("#q", query)
    page.wait_for_timeout(150)  # a typing search (the new page) settles first
    before = page.get_attribute("#app", "data-rendered")
    page.evaluate(MARK_KEY)
    page.press("#q", "Enter")
    page.wait_for_function(WAIT_RENDERED, arg=before, polling="raf")
    painted: float = page.evaluate(NEXT_PAINT)
    return painted - float(page.evaluate("window.keyAt"))


def by_keystroke(page: Page, query: str) -> float:
    """Milliseconds from the last keystroke of `query` (typed after the rest of it) to the next
    paint after its results are in the page: search as you type, its wait included."""
    page.fill("#q", query[:-1])
    page.wait_for_timeout(250)
    page.evaluate(MARK_KEY)
    before = page.get_attribute("#app", "data-rendered")
    page.press("#q", query[-1])
    page.wait_for_function(
        "([b, q]) => { const a = document.getElementById('app');"
        " return a.dataset.rendered !== b"
        " && new URLSearchParams(location.search).get('query') === q; }",
        arg=[before, query],
        polling="raf",
    )
    painted: float = page.evaluate(NEXT_PAINT)
    return painted - float(page.evaluate("window.keyAt"))


def static_at(commit: str) -> dict[str, bytes]:
    """The page's files (`/viz` and `/static/...`) as they were at `commit`."""
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, "app/static"],
        cwd=results.REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = {
        "/static/" + name.removeprefix("app/static/"): subprocess.run(
            ["git", "show", f"{commit}:{name}"], cwd=results.REPO, check=True, capture_output=True
        ).stdout
        for name in listed
    }
    files["/viz"] = files["/static/viz.html"]
    return files


def baseline_page(browser: Browser, server: DemoServer, commit: str) -> Page:
    """A tab whose page comes from `commit`; its calls go to the same service."""
    files = static_at(commit)

    def serve(route: Route) -> None:
        path = route.request.url.removeprefix(server.base).split("?")[0].split("#")[0]
        kind = "text/javascript" if path.endswith(".js") else "text/css"
        kind = "text/html" if path == "/viz" else kind
        route.fulfill(status=200, body=files[path], content_type=kind)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.route(f"{server.base}/viz", serve)
    page.route(f"{server.base}/static/**", serve)
    return page


def opened(page: Page, server: DemoServer) -> Page:
    page.goto(server.link)
    page.wait_for_function(WAIT_RENDERED, arg=None)
    by_enter(page, "warm up")  # the first query pays for the model's first call
    return page


def summary(times: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
        "n": len(times),
    }


def measure(
    browser: Browser, server: DemoServer, rounds: int, baseline: str | None
) -> dict[str, Any]:
    new = opened(browser.new_page(viewport={"width": 1400, "height": 1000}), server)
    old = opened(baseline_page(browser, server, baseline), server) if baseline else None
    enter: dict[str, list[float]] = {"new": [], "baseline": []}
    keystroke: list[float] = []
    for _ in range(rounds):
        for query in PAGE_QUERIES:  # interleaved: each query on each page in turn
            enter["new"].append(by_enter(new, query))
            if old is not None:
                enter["baseline"].append(by_enter(old, query))
            keystroke.append(by_keystroke(new, query))
    result: dict[str, Any] = {
        "load_average": results.load_average_text(),
        "rounds": rounds,
        "enter_to_rendered": {"new": summary(enter["new"])},
        "keystroke_to_rendered": {"new": summary(keystroke)},
    }
    if old is not None:
        result["baseline_commit"] = baseline
        result["enter_to_rendered"]["baseline"] = summary(enter["baseline"])
        ratios = [n / b for n, b in zip(enter["new"], enter["baseline"], strict=True)]
        result["enter_to_rendered"]["median_ratio_new_over_baseline"] = round(
            statistics.median(ratios), 2
        )
    return result


def screenshots(browser: Browser, server: DemoServer, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
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
    page.click("#filters-toggle")
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "search-phone.png"))
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", help="also time the page of this commit, interleaved")
    parser.add_argument("--screenshots", type=Path, help="write the README screenshots here")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_demo(Path(tmp) / "data") as server,
        sync_playwright() as playwright,
    ):
        browser = launch_chromium(playwright)
        if args.rounds > 0:  # 0: the screenshots only
            result = measure(browser, server, args.rounds, args.baseline)
            results.write_results(RESULTS, result, end="\n")
            print(json.dumps(result, indent=1))
        if args.screenshots:
            screenshots(browser, server, args.screenshots)
            print(f"screenshots written to {args.screenshots}")
        browser.close()


if __name__ == "__main__":
    main()
