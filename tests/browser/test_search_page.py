"""The search page in headless Chromium against the real service with the demo corpus.

Every test checks, on the way out, that the page logged no console error and requested nothing
outside 127.0.0.1."""

import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from bench.demo_server import DemoServer
from tests.browser.conftest import Watched, assert_clean, watch

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


def viz_requests(watched: Watched) -> int:
    return sum("/viz/search" in url for url in watched.requests)


# --- signing in -----------------------------------------------------------------------------


def test_the_dev_link_signs_in_and_leaves_no_token_in_the_address(
    browser: Browser, demo: DemoServer
) -> None:
    page = browser.new_page(viewport=DESKTOP)  # type: ignore[arg-type]
    watched = watch(page)
    page.goto(demo.link)
    wait_search(page, None)
    assert demo.token not in page.url and "#" not in page.url
    expect(page.locator("#who-text")).to_contain_text("Signed in as dev")
    assert page.locator("#results li.result").count() > 0
    assert_clean(watched)
    page.close()


def test_a_pasted_token_is_checked_and_bearer_is_accepted(
    browser: Browser, demo: DemoServer
) -> None:
    page = browser.new_page(viewport=DESKTOP)  # type: ignore[arg-type]
    watched = watch(page)
    page.goto(f"{demo.base}/viz")
    expect(page.locator("#token-hint")).to_contain_text("serve --dev")
    page.fill("#token-input", "not-a-token")
    page.click("#token-submit")
    expect(page.locator("#token-error")).to_contain_text("not accepted")
    assert page.locator("#app").is_hidden()
    watched.errors.clear()  # the refused /api/v1/me is logged by Chromium as a failed load
    page.fill("#token-input", f"Bearer {demo.token}")
    searched(page, lambda: page.click("#token-submit"))
    expect(page.locator("#who-text")).to_contain_text("dev")
    assert_clean(watched)
    page.close()


# --- filters, chips, pickers ----------------------------------------------------------------


def test_each_kind_of_chip_is_added_and_removed(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    pickers = [
        ("pick-doc_types", "file", "type: file"),
        ("pick-tags", "review", "tag: review"),
        ("pick-owners", "alice", "owner: alice"),
    ]
    for picker, value, chip in pickers:
        searched(page, lambda: page.check(f'#{picker} input[data-value="{value}"]'))
        assert chip in chips(page)
    first_file = page.locator("#results button[data-folder]").first
    folder = first_file.get_attribute("data-folder")
    searched(page, first_file.click)
    assert f"in: {folder}" in chips(page)
    for field, day in [("#f-after", "2024-01-01"), ("#f-before", "2026-12-31")]:
        page.fill(field, day)
        searched(page, lambda: page.press(field, "Enter"))
    page.click("#q")  # notes carry categories, files none: this one is typed, not picked
    searched(page, lambda: page.keyboard.type("category:Work "))
    expected = [
        "type: file", f"in: {folder}", "tag: review", "category: Work", "owner: alice",
        "after: 2024-01-01", "before: 2026-12-31",
    ]  # fmt: skip
    assert chips(page) == expected
    params = url_params(page)
    assert params["doc_types"] == ["file"] and params["modified_after"] == ["2024-01-01"]
    while chips(page):
        left = len(chips(page))
        searched(page, lambda: page.locator("#chips li button").first.click())
        assert len(chips(page)) == left - 1
        focused = page.evaluate(
            "document.activeElement.closest('#chips') ? 'chip' : document.activeElement.id"
        )
        assert focused == ("chip" if left > 1 else "q")  # focus stays where the chip was
    assert url_params(page) == {}
    assert page.input_value("#f-after") == ""


def test_a_pickers_counts_follow_the_other_filters(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    files_before = count_in(page, "pick-doc_types", "file")
    finance_before = count_in(page, "pick-tags", "finance")
    searched(page, lambda: page.check('#pick-tags input[data-value="finance"]'))
    files_after = count_in(page, "pick-doc_types", "file")
    assert 0 < files_after < files_before
    # the tag's own count is computed without the tag filter: it does not shrink to itself
    assert count_in(page, "pick-tags", "finance") == finance_before
    searched(page, lambda: page.check('#pick-doc_types input[data-value="file"]'))
    assert count_in(page, "pick-tags", "finance") == files_after


def test_clear_all_clears_chips_form_and_results(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget&tags=finance&modified_after=2024-01-01").page
    assert page.locator("#results li.result").count() > 0
    searched(page, lambda: page.click("#clear-all"))
    assert chips(page) == []
    assert page.input_value("#q") == "" and page.input_value("#f-after") == ""
    assert url_params(page) == {}
    expect(page.locator("#status")).to_contain_text("newest first")


# --- the search box -------------------------------------------------------------------------


def test_operators_typed_into_the_box_become_chips(opened: Callable[..., Watched]) -> None:
    watched = opened("/viz")
    page = watched.page
    page.click("#q")
    page.keyboard.type("budget ")
    searched(page, lambda: page.keyboard.type("type:file "))
    searched(page, lambda: page.keyboard.type('in:"/Projects-old" '))
    assert chips(page) == ["type: file", "in: /Projects-old"]
    assert page.input_value("#q").strip() == "budget"
    searched(page, lambda: page.press("#q", "Enter"))
    params = url_params(page)
    assert params["query"] == ["budget"] and params["path_prefixes"] == ["/Projects-old"]
    docs = result_docs(page)
    assert docs and all(d.startswith("file:") for d in docs)
    sent = viz_requests(watched)
    page.fill("#q", "budget colour:blue")
    page.press("#q", "Enter")
    expect(page.locator("#q-error")).to_contain_text('Unknown operator "colour:"')
    assert viz_requests(watched) == sent


# --- dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "typed", "message"),
    [("#f-after", "2025-02-30", "does not exist"), ("#f-before", "2025-02", "full date")],
)
def test_an_invalid_date_is_refused_and_nothing_is_sent(
    opened: Callable[..., Watched], field: str, typed: str, message: str
) -> None:
    watched = opened("/viz?query=budget")
    page = watched.page
    sent = viz_requests(watched)
    page.fill(field, typed)
    page.press(field, "Enter")
    expect(page.locator(f"{field}-error")).to_contain_text(message)
    assert page.get_attribute(field, "aria-invalid") == "true"
    page.press("#q", "Enter")  # the whole form refuses too
    assert viz_requests(watched) == sent
    assert "modified" not in page.url


def test_a_refused_search_clears_the_old_results_and_names_the_field(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=budget").page
    assert page.locator("#results li.result").count() > 0
    page.fill("#f-after", "2026-06-01")
    searched(page, lambda: page.press("#f-after", "Enter"))
    page.fill("#f-before", "2025-01-01")  # before < after: the service answers 400
    searched(page, lambda: page.press("#f-before", "Enter"))
    expect(page.locator("#f-after-error")).to_contain_text("later than")
    expect(page.locator("#search-error")).to_be_visible()
    assert page.locator("#results li.result").count() == 0
    assert page.locator("#legend li").count() == 0
    assert page.evaluate("document.getElementById('map').getContext('2d')") is not None
    quick = page.locator('[data-range="year"]')
    searched(page, quick.click)  # a good search again: error gone, results back
    expect(page.locator("#search-error")).to_be_hidden()
    assert page.locator("#results li.result").count() >= 0


# --- the URL --------------------------------------------------------------------------------


def test_reload_and_back_restore_the_search(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    page.fill("#q", "garden")
    searched(page, lambda: page.press("#q", "Enter"))
    searched(page, lambda: page.check('#pick-doc_types input[data-value="note"]'))
    shown = result_docs(page)
    searched(page, page.reload)
    assert page.input_value("#q") == "garden"
    assert chips(page) == ["type: note"]
    assert result_docs(page) == shown
    searched(page, page.go_back)
    assert chips(page) == [] and page.input_value("#q") == "garden"
    searched(page, page.go_back)
    assert page.input_value("#q") == ""
    searched(page, page.go_forward)
    searched(page, page.go_forward)
    assert chips(page) == ["type: note"] and result_docs(page) == shown


def test_a_deep_link_opens_a_search(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=telescope&doc_types=file&granularity=chunk&limit=10").page
    assert page.input_value("#q") == "telescope"
    assert chips(page) == ["type: file"]
    assert page.get_attribute("#g-chunk", "aria-pressed") == "true"
    expect(page.locator("#status")).to_contain_text("chunks")
    assert 0 < page.locator("#results li.result").count() <= 10


# --- results --------------------------------------------------------------------------------


def test_document_view_is_the_default_and_chunks_can_be_shown(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=quarterly%20budget%20plan&limit=50").page
    expect(page.locator("#status")).to_contain_text(re.compile(r"\d+ documents"))
    docs = result_docs(page)
    assert len(docs) == len(set(docs))
    searched(page, lambda: page.click("#g-chunk"))
    expect(page.locator("#status")).to_contain_text(re.compile(r"\d+ chunks"))
    assert url_params(page)["granularity"] == ["chunk"]


def test_paging_moves_through_the_results(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=meeting&limit=10").page
    first = result_docs(page)
    expect(page.locator("#page-info")).to_contain_text("Page 1 of")
    searched(page, lambda: page.click("#next"))
    assert url_params(page)["offset"] == ["10"]
    second = result_docs(page)
    assert second and not set(first) & set(second)
    expect(page.locator("#page-info")).to_contain_text("Page 2 of")


def test_browse_shows_no_score_and_a_query_marks_its_terms(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    expect(page.locator("#status")).to_contain_text("newest first")
    assert "score" not in page.locator("#results").inner_text()
    page.fill("#q", "budget")
    searched(page, lambda: page.press("#q", "Enter"))
    assert "score" in page.locator("#results li.result").first.inner_text()
    marks = page.locator("#results mark").all_inner_texts()
    assert marks and all(m.lower().startswith("budget") for m in marks)


def test_the_map_is_reachable_by_keyboard(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget").page
    page.focus("#map")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tooltip")).to_be_visible()
    expect(page.locator("#results li.result.selected")).to_have_count(1)
    assert page.get_attribute("#results li.result.selected", "data-index") == "0"


# --- phone ----------------------------------------------------------------------------------


def test_phone_width_has_no_sideways_scroll(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget&tags=finance", viewport=PHONE).page
    page.click("#filters-toggle")
    page.click("#view-3d")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    assert page.evaluate("getComputedStyle(document.getElementById('map')).touchAction") == "none"


# --- the OpenAPI explorers ------------------------------------------------------------------


@pytest.mark.parametrize(("path", "ready"), [("/docs", ".opblock"), ("/redoc", "[role=search]")])
def test_the_explorers_work_offline(
    browser: Browser, demo: DemoServer, path: str, ready: str
) -> None:
    page = browser.new_page(viewport=DESKTOP)  # type: ignore[arg-type]
    watched = watch(page)
    page.goto(demo.base + path)
    page.wait_for_selector(ready, timeout=30_000)
    expect(page.locator("body")).to_contain_text("/api/v1/search")
    assert_clean(watched)
    page.close()
