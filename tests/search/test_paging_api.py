"""Browse (newest first, exact totals) and paging: a selective filter still fills the page."""

from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    DAY,
    LONG,
    MAY_4,
    browse,
    doc,
    ids,
    index,
    search,
    viz,
)

# --- browse ------------------------------------------------------------------------------------


def test_browse_is_newest_first_and_pages_with_limit_and_offset(client: TestClient) -> None:
    index(
        client,
        *(
            doc(f"d{i}", LONG if i % 4 == 0 else "", modified_at=MAY_4 + 60 * i)
            | {"tags": [] if i % 3 == 0 else ["keep"]}
            for i in range(12)
        ),
    )
    newest_first = ["d11", "d10", "d8", "d7", "d5", "d4", "d2", "d1"]
    pages = [search(client, query="", tags=["keep"], limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [ids(page) for page in pages] == [
        newest_first[:3],
        newest_first[3:6],
        newest_first[6:],
        [],
    ]
    assert [page["total_found"] for page in pages] == [8, 8, 8, 8]
    dates = [r["modified_at"] for page in pages for r in page["results"]]
    assert dates == sorted(dates, reverse=True)


def test_browse_total_found_is_the_exact_number_of_matching_documents(
    client: TestClient,
) -> None:
    matching = [doc(f"m{i}", LONG if i % 10 == 0 else "", tags=["keep"]) for i in range(130)]
    others = [doc(f"o{i}", LONG if i % 5 == 0 else "") for i in range(40)]
    index(client, *matching[:100])
    index(client, *matching[100:], *others)
    for granularity in ("chunk", "document"):
        result = search(client, query="", limit=5, tags=["keep"], granularity=granularity)
        assert len(result["results"]) == 5
        assert result["total_found"] == 130, granularity
    assert search(client, query="", limit=5)["total_found"] == 170


def test_browse_pages_through_documents_of_one_date_without_repeats_or_gaps(
    client: TestClient,
) -> None:
    """The engine orders by date only; equal dates are ordered by id, read whole at a page's
    edge: past the first hundred candidates too, where the engine cut the run anywhere."""
    tied = [doc(f"t{i}", modified_at=MAY_4) for i in range(130)]
    older = [doc(f"o{i}", modified_at=MAY_4 - DAY - 60 * i) for i in range(20)]
    index(client, *tied[:70], *older[:10])
    index(client, *tied[70:], *older[10:])
    for order in ("newest", "oldest"):
        pages = [
            ids(search(client, query="", limit=10, offset=o, sort=order)) for o in range(0, 160, 10)
        ]
        listed = [doc_id for page in pages for doc_id in page]
        assert sorted(listed) == sorted(d["doc_id"] for d in tied + older), order  # once each
        tied_first = listed if order == "newest" else listed[::-1]
        assert set(tied_first[:130]) == {d["doc_id"] for d in tied}, order
        assert tied_first[130:] == [f"o{i}" for i in range(20)], order


# --- a selective filter still fills the page ---------------------------------------------------


def test_a_selective_filter_still_fills_the_page(client: TestClient) -> None:
    common = [
        doc(f"c{i}", f"Apple orchard harvest. Apple orchard harvest report {i}.", title="Apples")
        for i in range(147)
    ]
    rare = [
        doc(f"r{i}", f"Violin concerto rehearsal {i}; someone brought an apple.", tags=["rare"])
        for i in range(3)
    ]
    index(client, *common, *rare)
    query = "apple orchard harvest"
    expected = ["r0", "r1", "r2"]
    for algorithm in ALGORITHMS:
        unfiltered = ids(search(client, query=query, algorithm=algorithm, limit=100))
        assert not set(unfiltered) & set(expected), algorithm  # ranked far below a full page
        for granularity in ("chunk", "document"):
            result = search(
                client,
                query=query,
                algorithm=algorithm,
                granularity=granularity,
                tags=["rare"],
                limit=10,
            )
            assert sorted(ids(result)) == expected, (algorithm, granularity)
            assert result["total_found"] == 3
            top = search(
                client,
                query=query,
                algorithm=algorithm,
                granularity=granularity,
                tags=["rare"],
                limit=2,
            )
            assert len(top["results"]) == 2 and top["total_found"] >= 2
    assert browse(client, tags=["rare"]) == expected
    status, body = viz(client, query=query, algorithm="bm25", tags="rare")
    assert status == 200 and sorted(ids(body)) == expected


# --- fused pages agree -------------------------------------------------------------------------


def test_hybrid_pages_agree_with_one_request_within_the_first_fifty_results(
    client: TestClient,
) -> None:
    """Fused ranks depend on how deep each branch was read: every page within the first 50
    results is fused from the same depth, so paging neither repeats nor skips a result."""
    words = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath", "inlet"]
    index(
        client,
        *(
            doc(
                f"p{i}",
                f"Lantern {words[i % 9]} garden {words[i % 7]} report. "
                + " ".join(words[(i * j) % 9] for j in range(i % 13)),
            )
            for i in range(120)
        ),
    )
    query = "lantern garden report amber cedar"
    whole = ids(search(client, query=query, limit=50))
    assert len(whole) == 50
    for limit in (10, 20, 25):
        paged = [
            doc_id
            for offset in range(0, 50 - 50 % limit, limit)
            for doc_id in ids(search(client, query=query, limit=limit, offset=offset))
        ]
        assert paged == whole[: len(paged)], limit
