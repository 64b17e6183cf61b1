"""The search page in headless Chromium against the real service with the demo corpus.

Every test checks, on the way out, that the page logged no console error and requested nothing
outside 127.0.0.1."""

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, Route, expect

from bench.harness.demo_server import DemoServer
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    Watched,
    assert_clean,
    chips,
    count_in,
    enter,
    rendered,
    result_docs,
    searched,
    typed,
    url_params,
    viz_requests,
    wait_search,
    watch,
)

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
    paste = (
        "(token) => { const input = document.getElementById('token-input');"
        " input.value = token; input.dispatchEvent(new ClipboardEvent('paste')); }"
    )
    searched(page, lambda: page.evaluate(paste, f"Bearer {demo.token}"))  # checked on paste
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
        box = page.locator(f'#{picker} input[data-value="{value}"]')
        searched(page, box.check)
        assert chip in chips(page)
    first_file = page.locator("#results button[data-folder]").first
    folder = first_file.get_attribute("data-folder")
    searched(page, first_file.click)
    assert f"in: {folder}" in chips(page)
    for field, day in [("#f-after", "2024-01-01"), ("#f-before", "2026-12-31")]:
        page.fill(field, day)
        searched(page, enter(page, field))
    page.click("#q")  # notes carry categories, files none: this one is typed, not picked
    typed(page, "category:Work ")
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
    typed(page, "budget ")
    typed(page, "type:file ")
    typed(page, 'in:"/Projects-old" ')
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
    page = opened("/viz?query=telescope&doc_types=file&granularity=chunk&limit=10&matches=all").page
    assert page.input_value("#q") == "telescope"
    assert chips(page) == ["type: file"]
    assert page.get_attribute("#g-chunk", "aria-pressed") == "true"
    expect(page.locator("#status")).to_contain_text("chunks")
    assert 0 < page.locator("#results li.result").count() <= 10


# --- results --------------------------------------------------------------------------------


def test_document_view_is_the_default_and_chunks_can_be_shown(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=quarterly%20budget%20plan&limit=50&matches=all").page
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


def test_browse_shows_no_relevance_and_a_query_marks_its_terms(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz").page
    expect(page.locator("#status")).to_contain_text("newest first")
    assert "relevance" not in page.locator("#results").inner_text()
    page.fill("#q", "budget")
    searched(page, lambda: page.press("#q", "Enter"))
    badge = page.locator("#results li.result .relevance").first
    assert re.fullmatch(r"relevance \d{1,3} %", badge.inner_text())
    assert "fused rank" in (badge.get_attribute("title") or "")  # the meaning and the raw score
    marks = page.locator("#results mark").all_inner_texts()
    assert marks and all(m.lower().startswith("budget") for m in marks)


def test_the_map_is_reachable_by_keyboard(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget").page
    page.focus("#map")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tooltip")).to_be_visible()
    expect(page.locator("#results li.result.selected")).to_have_count(1)
    assert page.get_attribute("#results li.result.selected", "data-index") == "0"


def test_a_result_opens_the_text_around_its_chunk(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget%20plan&granularity=chunk&limit=50").page
    later = page.locator("#results li.result", has_text=re.compile(r"part [2-9] of")).first
    later.locator(".more button").click()
    context = later.locator(".context")
    expect(context).to_be_visible()
    chunk = context.locator(".chunk").inner_text()
    before = context.locator(".around").first.inner_text()
    assert chunk.strip() and before.strip()  # a later chunk has text before it
    assert later.locator(".more button").get_attribute("aria-expanded") == "true"


def test_the_folder_tree_opens_and_picks_a_folder(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    projects = page.locator('#folder-tree button.folder[data-folder="/Projects"]')
    total = int(projects.locator(".count").inner_text())
    page.click('#folder-tree [data-twisty="/Projects"]')
    child = page.locator('#folder-tree button.folder[data-folder="/Projects/Helios"]')
    expect(child).to_be_visible()
    assert int(child.locator(".count").inner_text()) < total
    searched(page, child.click)
    assert chips(page) == ["in: /Projects/Helios"]
    assert child.get_attribute("aria-pressed") == "true"
    for crumbs in page.locator("#results .crumbs").all_inner_texts():
        assert "".join(crumbs.split()).startswith("Projects\u203aHelios\u203a")
    searched(page, lambda: page.check('#pick-tags input[data-value="review"]'))
    assert int(projects.locator(".count").inner_text()) < total  # counted under the tag too


# --- phone ----------------------------------------------------------------------------------


def test_phone_width_has_no_sideways_scroll(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget&tags=finance", viewport=PHONE).page
    page.click("#filters-toggle")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    page.click("#filters-close")
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


# --- accessibility --------------------------------------------------------------------------

# Every visible text against the background it sits on (WCAG 2.x relative luminance).
LOW_CONTRAST = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || c[3] > 0.5) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const low = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const node = t.parentElement;
    if (!t.textContent.trim() || !node.checkVisibility({opacityProperty: true})) continue;
    if (node.closest('.busy')) continue;
    const style = getComputedStyle(node);
    const [a, b] = [lum(rgb(style.color)), lum(background(node))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < needed) low.push(`${t.textContent.trim().slice(0, 30)}: ${ratio.toFixed(2)}`);
  }
  return low;
}"""

# Buttons, checkboxes and links smaller than 24 x 24 px.
SMALL_TARGETS = """() => [...document.querySelectorAll('button, input, select, a')]
  .filter((n) => n.checkVisibility())
  .map((n) => [n, n.getBoundingClientRect()])
  .filter(([n, r]) => (r.width < 24 || r.height < 24) && !(n.type === 'checkbox' && n.labels.length
     && n.labels[0].getBoundingClientRect().height >= 24))
  .map(([n, r]) => `${n.tagName} ${n.id || n.textContent.trim().slice(0, 20)}`
     + ` ${r.width}x${r.height}`)"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_text_contrast_and_target_sizes_meet_wcag_aa(
    opened: Callable[..., Watched], viewport: dict[str, int]
) -> None:
    page = opened("/viz?query=budget&tags=finance", viewport=viewport).page
    if viewport is PHONE:
        page.click("#filters-toggle")
    page.fill("#f-after", "2025-02")
    page.press("#f-after", "Enter")  # an error message is on screen too
    assert page.evaluate(LOW_CONTRAST) == []
    assert page.evaluate(SMALL_TARGETS) == []


def test_a_title_links_to_its_document_in_a_new_tab_and_only_over_http(
    browser: Browser, demo: DemoServer
) -> None:
    """The answer is rewritten on its way to the page: a first result with a link and a page, a
    second with a `javascript:` link (a hostile or broken server), which must stay plain text."""
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    watched = watch(context.new_page())

    def rewrite(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        body["results"][0] |= {
            "url": "https://cloud.example/f/1",
            "page_number": 3,
            "page_end": 4,
            "page_count": 12,
        }
        body["results"][1] |= {"url": "javascript:alert(1)"}
        route.fulfill(response=response, json=body)

    watched.page.route("**/viz/search?*", rewrite)
    before = rendered(watched.page)
    watched.page.goto(f"{demo.base}/viz?query=budget&granularity=chunk#token={demo.token}")
    wait_search(watched.page, before)
    titles = watched.page.locator("#results li.result .r-title .title")
    first = titles.nth(0)
    assert first.evaluate("e => e.tagName") == "A"
    assert first.get_attribute("href") == "https://cloud.example/f/1"
    assert first.get_attribute("target") == "_blank"
    assert first.get_attribute("rel") == "noopener noreferrer"
    assert titles.nth(1).evaluate("e => e.tagName") == "SPAN"
    assert watched.page.locator("#results li.result").nth(1).locator("a").count() == 0
    expect(watched.page.locator("#results li.result").nth(0)).to_contain_text(
        "pages 3\u20134 of 12"
    )
    assert_clean(watched)
    context.close()
