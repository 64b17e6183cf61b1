"""Unit tests of the page's pure modules (operator parser, dates, URL state, excerpts), run in
Chromium: the files are served from app/static by request interception, no server."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route

STATIC = Path(__file__).resolve().parents[2] / "app" / "static"
ORIGIN = "http://127.0.0.1:9"


def serve_static(route: Route) -> None:
    """`/` is an empty page; `/static/...` are the files of app/static."""
    if route.request.url == ORIGIN + "/":
        route.fulfill(status=200, body="<!doctype html>", content_type="text/html")
        return
    path = route.request.url.removeprefix(ORIGIN + "/static/")
    file = (STATIC / path).resolve()
    if STATIC not in file.parents or not file.is_file():
        route.fulfill(status=404, body="")
        return
    kind = "text/javascript" if file.suffix == ".js" else "text/html"
    route.fulfill(status=200, body=file.read_text(encoding="utf-8"), content_type=kind)


@pytest.fixture(scope="module")
def js(browser: Browser) -> Iterator[Page]:
    page = browser.new_page()
    page.route(f"{ORIGIN}/**", serve_static)
    page.goto(ORIGIN + "/")
    yield page
    page.close()


def call(page: Page, module: str, function: str, *args: Any) -> Any:
    script = f"async (args) => (await import('/static/js/{module}.js')).{function}(...args)"
    return page.evaluate(script, list(args))


def parse(page: Page, text: str, final: bool = True) -> dict[str, Any]:
    result: dict[str, Any] = call(page, "query-syntax", "parseQuery", text, {"final": final})
    return result


def test_operators_become_filters_and_leave_the_text(js: Page) -> None:
    out = parse(js, 'budget type:file in:"/My Files" tag:finance owner:alice category:Work plan')
    assert out["text"] == "budget plan"
    assert [(f["field"], f["value"]) for f in out["filters"]] == [
        ("doc_types", "file"),
        ("path_prefixes", "/My Files"),
        ("tags", "finance"),
        ("owners", "alice"),
        ("categories", "Work"),
    ]
    assert out["errors"] == []


def test_dates_are_checked_and_kept_as_days(js: Page) -> None:
    out = parse(js, "after:2025-01-01 before:2025-06-30 report")
    assert [(f["field"], f["value"]) for f in out["filters"]] == [
        ("modified_after", "2025-01-01"),
        ("modified_before", "2025-06-30"),
    ]
    bad = parse(js, "after:2025-02-30 report")
    assert bad["filters"] == []
    assert "does not exist" in bad["errors"][0]
    assert bad["text"] == "after:2025-02-30 report"  # the bad token stays where it was typed
    partial = parse(js, "before:2025-02")
    assert "full date" in partial["errors"][0]


def test_an_unknown_operator_is_named_with_the_known_ones(js: Page) -> None:
    out = parse(js, "colour:blue budget")
    assert out["filters"] == []
    assert out["errors"] == [
        'Unknown operator "colour:".'
        " Known operators: type: in: tag: owner: category: after: before:"
    ]
    assert out["text"] == "colour:blue budget"


@pytest.mark.parametrize(
    "text",
    ["re: meeting notes", "meet at 10:30", "see http://example.org/x", "a:  b", "type:"],
)
def test_text_that_only_looks_like_an_operator_stays_text(js: Page, text: str) -> None:
    out = parse(js, text)
    assert out["filters"] == []
    if text != "type:":
        assert out["errors"] == []
    assert out["text"] == " ".join(text.split())


def test_while_typing_the_last_token_waits_for_a_space(js: Page) -> None:
    assert parse(js, "budget type:fi", final=False)["filters"] == []
    assert parse(js, 'in:"/My Fi', final=False)["filters"] == []
    typed = parse(js, "budget type:file ", final=False)
    assert [f["value"] for f in typed["filters"]] == ["file"]
    assert typed["text"] == "budget "  # the caret stays after a space


def test_values_are_normalized_like_the_service_does(js: Page) -> None:
    out = parse(js, "type:FILE in:Projects//Reports/ IN:/x")
    assert [f["value"] for f in out["filters"]] == ["file", "/Projects/Reports", "/x"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("2025-01-31", None),
        ("2024-02-29", None),
        ("", None),
        ("2025-02-29", "does not exist"),
        ("2025-13-01", "month 13 does not exist"),
        ("2025-06", "full date"),
        ("2025", "full date"),
        ("02/30/2025", "not a date"),
        ("yesterday", "not a date"),
    ],
)
def test_check_date(js: Page, text: str, problem: str | None) -> None:
    found = call(js, "dates", "checkDate", text)
    if problem is None:
        assert found is None
    else:
        assert problem in found


def test_url_state_round_trips_and_uses_the_api_names(js: Page) -> None:
    script = """async () => {
      const s = await import('/static/js/search-state.js');
      const state = s.emptyState();
      Object.assign(state, {query: 'q3 report', doc_types: ['file', 'note'],
        path_prefixes: ['/My Files', '/a,b'], tags: ['x'], modified_before: '2025-06-30',
        granularity: 'chunk', offset: 40});
      const url = s.toUrlParams(state).toString();
      const back = s.fromUrlParams(new URLSearchParams(url));
      const api = Object.fromEntries(s.toApiParams(state));
      return {url, back, api, empty: s.toUrlParams(s.emptyState()).toString()};
    }"""
    out = js.evaluate(script)
    assert out["empty"] == ""
    assert out["back"]["path_prefixes"] == ["/My Files", "/a,b"]
    assert out["back"]["doc_types"] == ["file", "note"]
    assert out["back"]["offset"] == 40 and out["back"]["granularity"] == "chunk"
    assert "algorithm" not in out["url"]  # defaults stay out of the address bar
    assert out["api"]["path_prefixes"] == "/My Files\n/a,b"
    assert out["api"]["doc_types"] == "file,note"
    assert out["api"]["modified_before"] == "2025-06-30T23:59:59Z"  # the whole day
    assert out["api"]["granularity"] == "chunk" and out["api"]["include_facets"] == "true"


def test_a_malformed_url_falls_back_to_defaults(js: Page) -> None:
    script = """async () => {
      const s = await import('/static/js/search-state.js');
      const url = 'algorithm=magic&limit=500&offset=-3&tags=a%0A%0Aa';
      return s.fromUrlParams(new URLSearchParams(url));
    }"""
    out = js.evaluate(script)
    assert (out["algorithm"], out["limit"], out["offset"]) == ("hybrid", 20, 0)
    assert out["tags"] == ["a"]


def test_excerpt_is_the_best_window_with_terms_marked(js: Page) -> None:
    words = ["filler"] * 100 + ["the", "quarterly", "budgets", "are", "due"] + ["tail"] * 100
    out = call(js, "excerpt", "bestExcerpt", " ".join(words), "quarterly budget", 40)
    text = "".join(p["text"] for p in out["parts"])
    assert len(text.split()) == 40
    assert [p["text"] for p in out["parts"] if p["mark"]] == ["quarterly", "budgets"]
    assert out["cutBefore"] and out["cutAfter"]


def test_doc_type_colours_are_stable(js: Page) -> None:
    types = ["file", "note", "deck_card", "news_item", "wiki_page", "x"]
    first = [call(js, "palette", "colorFor", t) for t in types]
    js.reload()
    again = [call(js, "palette", "colorFor", t) for t in types]
    assert first == again
    assert len(set(first[:4])) == 4, json.dumps(first)  # the demo's types never share one
