"""The search page as people use it (issue 19), in headless Chromium against the demo service:
what the box parses becomes chips before the request leaves, what it cannot parse blocks the
request and clears older results, honest counts for ranked searches, signing in from a link,
the folder tree on the keyboard, the filters as a sheet on a phone, sort, search as you type.

Each test names the numbered defect of the issue it covers."""

import re
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Browser, Page, Route, expect

from bench.harness.demo_server import DemoServer
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    Watched,
    assert_clean,
    chips,
    rendered,
    result_docs,
    searched,
    url_params,
    viz_requests,
    wait_search,
    watch,
)

NONSENSE = "zzqxqv nonexistentword"


def last_search(watched: Watched) -> dict[str, list[str]]:
    """The parameters of the last /viz/search the page sent."""
    sent = [url for url in watched.requests if "/viz/search" in url]
    return parse_qs(urlsplit(sent[-1]).query)


def refused(page: Page, action: Callable[[], object]) -> None:
    """Run `action`, which the page must refuse without searching."""
    before = page.get_attribute("#app", "data-refused")
    action()
    page.wait_for_function(
        "(b) => document.getElementById('app').dataset.refused !== b", arg=before
    )


# --- 1. operators at the end of the box -----------------------------------------------------


def test_1_operators_at_the_end_of_the_box_become_chips_before_the_search(
    opened: Callable[..., Watched],
) -> None:
    watched = opened("/viz")
    page = watched.page
    page.fill("#q", "quarterly budget type:file in:/Finance after:2026-01-01")
    searched(page, lambda: page.press("#q", "Enter"))
    assert chips(page) == ["type: file", "in: /Finance", "after: 2026-01-01"]
    assert page.input_value("#q") == "quarterly budget"
    assert page.input_value("#f-after") == "2026-01-01"
    sent = last_search(watched)
    assert sent["query"] == ["quarterly budget"] and sent["modified_after"] == ["2026-01-01"]
    assert sent["doc_types"] == ["file"] and sent["path_prefixes"] == ["/Finance"]
    assert url_params(page)["modified_after"] == ["2026-01-01"]
    page.fill("#q", "budget category:Work")
    searched(page, lambda: page.press("#q", "Enter"))
    assert "category: Work" in chips(page)
    assert last_search(watched)["query"] == ["budget"]


# --- 2. an input error clears the old results -----------------------------------------------


def test_2_an_input_error_blocks_the_search_and_clears_the_old_results(
    opened: Callable[..., Watched],
) -> None:
    watched = opened("/viz?query=budget")
    page = watched.page
    assert page.locator("#results li.result").count() > 0
    sent = viz_requests(watched)
    for broken, message in [
        ("budget colour:blue", 'Unknown operator "colour:"'),
        ("budget after:2026-13-01", "month 13 does not exist"),
    ]:
        page.fill("#q", broken)
        refused(page, lambda: page.press("#q", "Enter"))
        expect(page.locator("#q-error")).to_contain_text(message)
        expect(page.locator("#results li.result")).to_have_count(0)
        expect(page.locator("#status")).to_contain_text("Nothing was searched")
        assert page.locator("#legend li").count() == 0
    assert viz_requests(watched) == sent


# --- 3. a reversed date range ---------------------------------------------------------------


def test_3_a_reversed_range_is_caught_in_the_page_in_its_words(
    opened: Callable[..., Watched],
) -> None:
    watched = opened("/viz?query=budget")
    page = watched.page
    page.fill("#f-after", "2026-06-01")
    searched(page, lambda: page.press("#f-after", "Enter"))
    sent = viz_requests(watched)
    page.fill("#f-before", "2026-01-01")
    refused(page, lambda: page.press("#f-before", "Enter"))
    expect(page.locator("#f-before-error")).to_have_text(
        '"Before" (2026-01-01) is earlier than "After" (2026-06-01): swap them or clear one.'
    )
    assert viz_requests(watched) == sent  # nothing was sent: no API names, no failed loads
    expect(page.locator("#results li.result")).to_have_count(0)
    expect(page.locator("#folder-tree")).not_to_contain_text("could not be loaded")
    page.fill("#f-before", "2026-12-31")
    searched(page, lambda: page.press("#f-before", "Enter"))
    expect(page.locator("#f-before-error")).to_be_hidden()


def test_3_a_link_with_a_reversed_range_is_refused_without_a_request(
    browser: Browser, demo: DemoServer
) -> None:
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    watched = watch(context.new_page())
    watched.page.goto(
        f"{demo.base}/viz?query=budget&modified_after=2026-06-01&modified_before=2026-01-01"
        f"#token={demo.token}"
    )
    expect(watched.page.locator("#f-before-error")).to_contain_text('"Before" (2026-01-01)')
    assert viz_requests(watched) == 0
    assert_clean(watched)
    context.close()


# --- 4. honest counts and the empty state ---------------------------------------------------


def test_4_a_query_counts_its_strong_matches_against_what_the_filters_allow(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=quarterly%20budget").page
    status = page.locator("#status")
    expect(status).to_contain_text(re.compile(r"\d+ strong match(es)? of 300 documents"))
    strong = int(re.search(r"(\d+) strong", status.inner_text()).group(1))  # type: ignore[union-attr]
    assert 0 < strong < 300
    assert page.locator("#results li.result.weak").count() == 0
    assert "score" not in page.locator("#results").inner_text()  # relevance, not raw scores
    searched(page, lambda: page.get_by_role("button", name="Show all 300").click())
    assert url_params(page)["matches"] == ["all"]
    expect(status).to_contain_text("300 documents the filters allow, ranked")
    expect(status).to_contain_text(f"{strong} strong match")
    searched(page, lambda: page.select_option("#f-limit", "50"))
    searched(page, lambda: page.click("#next"))
    assert page.locator("#results li.result.weak").count() > 0  # the weak ones are marked


def test_4_a_nonsense_query_says_nothing_matched_well_and_offers_ways_out(
    opened: Callable[..., Watched],
) -> None:
    page = opened(f"/viz?query={NONSENSE}&doc_types=note").page
    expect(page.locator("#status")).to_contain_text("0 strong matches of 75 documents")
    empty = page.locator("#results li.empty")
    expect(empty).to_contain_text(f"Nothing matched {NONSENSE} well under these filters.")
    assert page.locator("#results li.result").count() == 0
    searched(page, lambda: empty.get_by_role("button", name="Drop the filters").click())
    assert chips(page) == [] and page.input_value("#q") == NONSENSE
    expect(page.locator("#status")).to_contain_text("0 strong matches of 300 documents")
    searched(page, lambda: empty.get_by_role("button", name="Search the words only").click())
    assert url_params(page)["algorithm"] == ["bm25"]
    expect(empty).to_contain_text("Nothing matched")
    searched(page, lambda: empty.get_by_role("button", name=re.compile("closest")).click())
    assert url_params(page)["matches"] == ["all"]


# --- 5. the document opens: tests/browser/test_search_page.py, ------------------------------
# test_a_title_links_to_its_document_in_a_new_tab_and_only_over_http


# --- 6. signing in from a link --------------------------------------------------------------


def test_6_a_copied_link_opens_signed_in_in_a_new_tab(browser: Browser, demo: DemoServer) -> None:
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    first = watch(context.new_page())
    before = rendered(first.page)
    first.page.goto(f"{demo.base}/viz#token={demo.token}")
    wait_search(first.page, before)
    second = watch(context.new_page())
    second.page.goto(f"{demo.base}/viz?query=garden")
    wait_search(second.page, None)
    expect(second.page.locator("#who-text")).to_contain_text("Signed in as dev")
    assert result_docs(second.page) and demo.token not in second.page.url
    for watched in (first, second):
        assert_clean(watched)
    context.close()


def test_6_the_signed_in_link_pasted_into_the_sign_in_screen_signs_in(
    browser: Browser, demo: DemoServer
) -> None:
    for how in ("paste into the box", "paste into the address bar"):
        context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
        watched = watch(context.new_page())
        page = watched.page
        page.goto(f"{demo.base}/viz")
        expect(page.locator("#token-box")).to_be_visible()
        if how == "paste into the box":
            paste = (
                "(link) => { const input = document.getElementById('token-input');"
                " input.value = link; input.dispatchEvent(new ClipboardEvent('paste')); }"
            )
            searched(page, lambda: page.evaluate(paste, demo.link))  # noqa: B023
        else:  # only the fragment changes: no reload
            searched(page, lambda: page.goto(demo.link))  # noqa: B023
        expect(page.locator("#who-text")).to_contain_text("Signed in as dev")
        assert "#" not in page.url
        assert_clean(watched)
        context.close()


# --- 7. the folder tree on the keyboard -----------------------------------------------------


def focused_folder(page: Page) -> str | None:
    path: str | None = page.evaluate(
        "() => document.activeElement.getAttribute('role') === 'treeitem'"
        " ? document.activeElement.dataset.path : null"
    )
    return path


def test_7_the_folder_tree_is_one_tab_stop_with_arrow_keys(opened: Callable[..., Watched]) -> None:
    page = opened("/viz").page
    page.locator("#pick-doc_types input").last.focus()
    page.keyboard.press("Tab")
    first = focused_folder(page)
    assert first == page.locator("#folder-tree [role=treeitem]").first.get_attribute("data-path")
    page.keyboard.press("Tab")  # one press crosses the whole tree
    assert page.evaluate("document.activeElement.id") == "filter-tags"
    page.keyboard.press("Shift+Tab")
    assert focused_folder(page) == first
    page.keyboard.press("ArrowDown")
    second = focused_folder(page)
    assert second and second != first
    page.keyboard.press("ArrowUp")
    assert focused_folder(page) == first
    for _ in range(40):
        if focused_folder(page) == "/Projects":
            break
        page.keyboard.press("ArrowDown")
    projects = page.locator('#folder-tree [data-path="/Projects"]')
    page.keyboard.press("ArrowRight")
    expect(projects).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowRight")
    child = focused_folder(page)
    assert child and child.startswith("/Projects/")
    page.keyboard.press("ArrowLeft")
    assert focused_folder(page) == "/Projects"
    page.keyboard.press("ArrowLeft")
    expect(projects).to_have_attribute("aria-expanded", "false")
    searched(page, lambda: page.keyboard.press("Enter"))
    assert chips(page) == ["in: /Projects"]
    assert focused_folder(page) == "/Projects"  # the focus stays on the folder picked


# --- 8. the filters on a phone --------------------------------------------------------------


def test_8_on_a_phone_the_filters_are_a_sheet_with_show_n_results(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=budget", viewport=PHONE).page
    page.click("#filters-toggle")
    sheet = page.locator("#filters")
    expect(sheet).to_be_visible()
    assert sheet.evaluate("e => getComputedStyle(e).position") == "fixed"
    expect(page.locator("#filters-close")).to_be_visible()
    for picker, value in [("pick-doc_types", "file"), ("pick-tags", "finance")]:
        searched(page, lambda: page.check(f'#{picker} input[data-value="{value}"]'))  # noqa: B023
    searched(page, lambda: page.click('#folder-tree [data-folder="/Finance"]'))
    expect(sheet).to_be_visible()  # picking keeps the sheet open
    shown = page.locator("#filters-show")
    count = re.search(r"Show (\d+) results?", shown.inner_text())
    strong = re.search(r"(\d+) strong", page.locator("#status").inner_text())
    assert count and strong and count.group(1) == strong.group(1) != "0"
    shown.click()
    expect(sheet).to_be_hidden()
    top = page.locator("#results-title").bounding_box()
    assert top is not None and 0 <= top["y"] < PHONE["height"]
    page.click("#filters-toggle")
    page.click("#filters-close")
    expect(sheet).to_be_hidden()
    page.click("#filters-toggle")
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    assert page.evaluate("document.activeElement.id") == "filters-toggle"


# --- 9. context, titles, Clear all, the map, a stopped service ------------------------------


def test_9_context_reads_on_around_the_excerpt_with_the_terms_marked(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?query=budget").page
    first = page.locator("#results li.result").first
    excerpt = first.locator(".excerpt").inner_text()
    first.locator(".more button").click()
    context = first.locator(".context")
    expect(context).to_be_visible()
    expect(first.locator(".excerpt")).to_be_hidden()  # not said twice
    assert len(context.inner_text()) > len(excerpt) + 600
    assert context.locator(".around mark").count() > 0  # terms marked beyond the chunk too


def test_9_titles_mark_the_query_terms(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget").page
    marks = page.locator("#results .r-title mark").all_inner_texts()
    assert marks and all(m.lower().startswith("budget") for m in marks)


def test_9_clear_all_shows_only_with_chips(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget").page
    expect(page.locator("#clear-all")).to_be_hidden()
    searched(page, lambda: page.check('#pick-doc_types input[data-value="file"]'))
    expect(page.locator("#clear-all")).to_be_visible()


def test_9_a_map_of_two_results_names_only_the_axis_they_spread_along(
    opened: Callable[..., Watched],
) -> None:
    page = opened("/viz?path_prefixes=/Recipes").page
    assert len(result_docs(page)) == 2
    axes = page.get_attribute("#map", "data-axes") or ""
    assert axes.startswith("PC1 (100% of variance)") and "PC2" not in axes


def test_9_a_stopped_service_clears_counts_and_folders_and_offers_retry(
    opened: Callable[..., Watched],
) -> None:
    watched = opened("/viz?query=budget")
    page = watched.page
    assert page.locator("#pick-doc_types .count").count() > 0

    def down(route: Route) -> None:
        route.abort("connectionrefused")

    page.route("**/viz/search?*", down)
    page.route("**/api/v1/folders?*", down)
    searched(page, lambda: page.check('#pick-doc_types input[data-value="note"]'))
    expect(page.locator("#search-error")).to_contain_text("did not answer")
    assert page.locator("#pick-doc_types .count").count() == 0  # no stale counts
    expect(page.locator("#folder-tree")).to_contain_text("could not be loaded")
    page.unroute("**/viz/search?*")
    page.unroute("**/api/v1/folders?*")
    watched.errors.clear()  # the refused connections are logged as failed loads
    searched(page, lambda: page.click("#retry"))
    expect(page.locator("#search-error")).to_be_hidden()
    assert result_docs(page) and page.locator("#pick-doc_types .count").count() > 0
    expect(page.locator("#folder-tree")).not_to_contain_text("could not be loaded")


# --- sort and search as you type ------------------------------------------------------------


def test_the_sort_picker_orders_by_date(opened: Callable[..., Watched]) -> None:
    page = opened("/viz?query=budget&matches=all").page
    searched(page, lambda: page.select_option("#f-sort", "newest"))
    assert url_params(page)["sort"] == ["newest"]
    dates = page.locator("#results li.result time").evaluate_all(
        "items => items.map(i => i.getAttribute('datetime'))"
    )
    assert len(dates) > 2 and dates == sorted(dates, reverse=True)
    expect(page.locator("#status")).to_contain_text("newest first")
    page.fill("#q", "")
    searched(page, lambda: page.press("#q", "Enter"))
    assert page.locator('#f-sort option[value="relevance"]').is_disabled()


def test_search_as_you_type_cancels_in_flight_and_never_flashes_empty(
    opened: Callable[..., Watched],
) -> None:
    watched = opened("/viz?query=garden")
    page = watched.page
    page.evaluate(
        """() => {
          window.emptied = 0; window.aborted = 0;
          const list = document.getElementById('results');
          new MutationObserver(() => { if (!list.children.length) window.emptied++; })
            .observe(list, {childList: true});
          const fetched = window.fetch;
          window.fetch = (url, options) => {
            if (String(url).includes('/viz/search') && options && options.signal) {
              options.signal.addEventListener('abort', () => window.aborted++);
            }
            return fetched(url, options);
          };
        }"""
    )
    held: list[Route] = []

    def hold(route: Route) -> None:  # every answer waits: typing overtakes it
        held.append(route)

    page.route("**/viz/search?*", hold)
    page.fill("#q", "")
    page.click("#q")
    page.keyboard.type("budget type:file ", delay=90)
    page.wait_for_timeout(300)
    assert result_docs(page)  # the old results stay while the new ones are on their way
    page.unroute("**/viz/search?*")
    before = rendered(page)
    for route in held:
        try:
            route.continue_()
        except Exception:
            continue
    wait_search(page, before)
    assert url_params(page)["query"] == ["budget"] and chips(page) == ["type: file"]
    assert all(d.startswith("file:") for d in result_docs(page))
    assert page.evaluate("window.emptied") == 0
    assert page.evaluate("window.aborted") > 0  # each keystroke cancelled the search in flight
    watched.errors.clear()  # Chromium logs the cancelled fetches
