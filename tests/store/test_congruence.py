"""The embedded engine (Qdrant Edge, in process and in an engine process of its own, as `serve`
runs it) and server mode (qdrant-client, local `:memory:` mode) answer every search of the
service alike: same documents, same order, same scores, counts and facets. Plus: EdgeStore
restarts idempotently, and translate never drops a condition silently."""

import math
import random
import shutil
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import qdrant_edge as qe
from qdrant_client.http import models

from app.auth import Principal
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters import selectors
from app.filters.conditions import build_filter
from app.filters.spec import FilterSpec
from app.index_settings import IndexSettings
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.search.algorithms import CANDIDATE_KEYS, Algorithm, FusionMethod, QueryEncoder
from app.search.service import Granularity, SearchOutcome, SearchQuery, SearchService
from app.store import fields, translate
from app.store.base import Hit, Query, Store
from app.store.edge import EdgeStore
from app.store.engine.process_store import ProcessStore
from app.store.engine.supervisor import Supervisor
from app.store.errors import CopyFailed
from app.store.fields import DENSE_VECTOR, PAYLOAD_INDEXES, SPARSE_VECTOR
from app.store.server import ServerStore
from tests.helpers import doc

LOCAL_MODE_WARNING = "Payload indexes have no effect in the local Qdrant"
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z
SEED = 3  # any seed will do
WORDS = ["comet", "orbit", "budget", "report", "telescope"]
TYPES = ["note", "file", "deck_card"]
TAGS = [["urgent"], ["finance"], ["urgent", "finance"], [], ["travel"]]
OWNERS = ["alice", "bob", "carol"]
FOLDERS = ["/Projects", "/Projects/Reports", "/Archive/Projects", "/Projects-old", "/Home"]


def body(i: int, chunks: int) -> str:
    """Every query word in every chunk, each a pseudo-random number of times, plus words unique
    to the chunk: nearly every score differs, so the order of results is really compared."""
    rng = random.Random(SEED * 1000 + i)
    sentences = []
    for c in range(chunks):
        words = [word for word in WORDS for _ in range(rng.randint(1, 9))]
        rng.shuffle(words)
        fillers = [f"u{i}x{c}x{k}" for k in range(rng.randint(1, 30))]
        sentences.append(" ".join(words + fillers) + ".")
    return " ".join(sentences)


def corpus() -> list[dict[str, Any]]:
    documents = []
    for i in range(36):
        doc_type = TYPES[i % 3]
        fields: dict[str, Any] = {
            "doc_type": doc_type,
            "owner": OWNERS[i % 3],
            "modified_at": T0 + i * 86_400 - (i % 5) * 7_000,
            "tags": TAGS[i % 5],
            "acl": ["group:eng"] if i % 4 == 0 else (["user:alice"] if i % 4 == 1 else []),
        }
        if doc_type == "file":
            fields["file_path"] = f"{FOLDERS[i % 5]}/doc{i}.md"
        if doc_type == "note":
            fields["category"] = "Work" if i % 2 else "Home"
        documents.append(doc(f"d{i}", body(i, 1 + i % 4), title=f"Title {i}", **fields))
    return documents


@dataclass
class Pair:
    edge: EdgeStore
    server: ServerStore
    process: ProcessStore

    @property
    def others(self) -> tuple[Store, ...]:
        """What must answer as the in-process embedded engine does."""
        return (self.server, self.process)


def load(store: Store) -> None:
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=60)
    written = indexer.index(indexer.accept(validate_batch(corpus())))
    assert len(written) == 36


def server_store() -> ServerStore:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LOCAL_MODE_WARNING, UserWarning)
        return ServerStore(":memory:", None, "c")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("process"), collection="c")
    engine = Supervisor(settings, threshold=10**9)  # no rebuild: the same segments
    pair = Pair(EdgeStore(tmp_path_factory.mktemp("edge"), "c"), server_store(), engine.start())
    try:
        for store in (pair.edge, *pair.others):
            load(store)
        yield pair
    finally:
        pair.edge.close()
        pair.server.close()
        pair.process.close()


def service(store: Store) -> SearchService:
    return SearchService(store, QueryEncoder(HashingEncoder(), Bm25Encoder()), rrf_k=60)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)


def key(hit: Hit, granularity: Granularity) -> tuple[str, ...]:
    """A chunk result is a point; a document result is its document (of two chunks with the
    same best score, either may stand for it)."""
    doc_key = (hit.payload["doc_type"], hit.payload["doc_id"])
    return (hit.id, *doc_key) if granularity is Granularity.CHUNK else doc_key


def assert_same_hits(
    edge: list[Hit], server: list[Hit], granularity: Granularity, cut: bool, label: str
) -> None:
    """Same results in the same order with the same scores. Results whose scores tie may come
    in either order; a tie at the end of a cut page may even bring different results."""
    assert len(edge) == len(server), label
    for position, (e, s) in enumerate(zip(edge, server, strict=True)):
        assert close(e.score, s.score), (label, position, e.score, s.score)
    start = 0
    while start < len(edge):
        end = start + 1
        while end < len(edge) and close(edge[end].score, edge[start].score):
            end += 1
        run_e = [key(h, granularity) for h in edge[start:end]]
        run_s = [key(h, granularity) for h in server[start:end]]
        if cut and end == len(edge):
            pass  # may tie with results past the page: only the scores are comparable
        elif end - start == 1:
            assert run_e == run_s, (label, start)
        else:
            assert sorted(run_e) == sorted(run_s), (label, start)
        start = end
    for e, s in zip(edge, server, strict=True):
        if e.id == s.id:  # the revision is when each store's copy was accepted
            assert e.payload | {"revision": 0} == s.payload | {"revision": 0}, label


def assert_same_outcome(edge: SearchOutcome, server: SearchOutcome, query: SearchQuery) -> None:
    label = repr(query)
    cut = len(edge.hits) == query.limit
    assert_same_hits(edge.hits, server.hits, query.granularity, cut, label)
    assert edge.total_found == server.total_found, label
    assert edge.verified_chunk_count == server.verified_chunk_count, label
    assert edge.dropped_document_count == server.dropped_document_count == 0, label
    assert edge.facets == server.facets, label


ALICE = Principal("alice", ("eng",))
PRINCIPALS = {"alice+eng": ALICE, "bob": Principal("bob"), "dave+eng": Principal("dave", ("eng",))}
SPECS = {
    "none": FilterSpec(),
    "files": FilterSpec(doc_types=("file",)),
    "notes+cards": FilterSpec(doc_types=("note", "deck_card")),
    "folder": FilterSpec(path_prefixes=("/Projects",)),
    "two folders": FilterSpec(path_prefixes=("/Projects/Reports", "/Home")),
    "tags any": FilterSpec(tags=("urgent", "travel")),
    "tags all": FilterSpec(tags_all=("urgent", "finance")),
    "category": FilterSpec(categories=("Work",)),
    "owners": FilterSpec(owners=("bob", "carol")),
    "dates": FilterSpec(modified_after=T0 + 5 * 86_400, modified_before=T0 + 20 * 86_400),
    "combined": FilterSpec(
        doc_types=("file", "note"), modified_after=T0 + 3 * 86_400, tags=("urgent", "finance")
    ),
    "nothing": FilterSpec(doc_types=("news_item",)),
}
TEXTS = ["", "comet orbit", "budget report telescope"]
MODES = [
    (Algorithm.HYBRID, FusionMethod.RRF),
    (Algorithm.HYBRID, FusionMethod.DBSF),
    (Algorithm.SEMANTIC, FusionMethod.RRF),
    (Algorithm.BM25, FusionMethod.RRF),
]


def both(stores: Pair, principal: Principal, query: SearchQuery) -> None:
    expected = service(stores.edge).search(principal, query)
    for other in stores.others:
        assert_same_outcome(expected, service(other).search(principal, query), query)


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: t or "browse")
@pytest.mark.parametrize("granularity", list(Granularity), ids=str)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"{m[0]}-{m[1]}")
def test_every_algorithm_and_granularity_agrees(
    stores: Pair, text: str, granularity: Granularity, mode: tuple[Algorithm, FusionMethod]
) -> None:
    algorithm, fusion = mode
    for limit, offset in ((100, 0), (7, 0), (5, 4)):
        query = SearchQuery(
            text=text,
            algorithm=algorithm,
            fusion=fusion,
            granularity=granularity,
            limit=limit,
            offset=offset,
            include_facets=offset == 0,
        )
        both(stores, ALICE, query)


@pytest.mark.parametrize("spec_name", SPECS)
@pytest.mark.parametrize("principal_name", PRINCIPALS)
def test_every_filter_and_principal_agrees(
    stores: Pair, spec_name: str, principal_name: str
) -> None:
    principal, spec = PRINCIPALS[principal_name], SPECS[spec_name]
    for text in TEXTS:
        for algorithm, fusion in MODES:
            for granularity in Granularity:
                query = SearchQuery(
                    text=text,
                    algorithm=algorithm,
                    fusion=fusion,
                    granularity=granularity,
                    limit=8,
                    spec=spec,
                    include_facets=text == "",  # facets do not depend on the query text
                )
                both(stores, principal, query)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"{m[0]}-{m[1]}")
def test_score_threshold_agrees(stores: Pair, mode: tuple[Algorithm, FusionMethod]) -> None:
    algorithm, fusion = mode
    for granularity in Granularity:
        query = SearchQuery(
            text="comet orbit telescope",
            algorithm=algorithm,
            fusion=fusion,
            granularity=granularity,
            limit=100,
        )
        everything = service(stores.edge).search(ALICE, query).hits
        third = len(everything) // 3
        scores = [hit.score for hit in everything]
        cut_at = next(i for i in range(third, len(scores)) if not close(scores[i], scores[i + 1]))
        threshold = (scores[cut_at] + scores[cut_at + 1]) / 2  # between two distinct scores
        cut = replace(query, score_threshold=threshold)
        kept = service(stores.edge).search(ALICE, cut).hits
        assert 0 < len(kept) < len(everything)
        assert all(hit.score >= threshold for hit in kept)
        both(stores, ALICE, cut)


def test_the_corpus_is_what_the_comparisons_assume(stores: Pair) -> None:
    """The comparisons above are only meaningful if the fixture holds real variety."""
    outcome = service(stores.edge).search(
        ALICE,
        SearchQuery(
            text="comet orbit", algorithm=Algorithm.SEMANTIC, limit=100, include_facets=True
        ),
    )
    scores = [round(hit.score, 6) for hit in outcome.hits]
    assert len(outcome.hits) > len({hit.payload["doc_id"] for hit in outcome.hits})
    assert len(set(scores)) > 0.9 * len(scores)  # mostly distinct: the order is tested
    visible = [
        d for d in corpus() if d["owner"] == "alice" or {"user:alice", "group:eng"} & set(d["acl"])
    ]
    assert outcome.facets is not None
    assert sum(outcome.facets["doc_type"].values()) == len(visible) < 36
    assert len(outcome.facets["doc_type"]) == 3 and len(outcome.facets["folders"]) > 2


@pytest.mark.parametrize("other", ["server", "process"])
def test_store_primitives_agree(stores: Pair, other: str) -> None:
    theirs: Store = getattr(stores, other)
    selector = build_filter(ALICE, FilterSpec(doc_types=("file",)))
    assert stores.edge.count(selector) == theirs.count(selector) > 0
    assert stores.edge.count() == theirs.count()
    edge_points = sorted(stores.edge.scroll(selector, limit=1000), key=lambda h: h.id)
    their_points = sorted(theirs.scroll(selector, limit=1000), key=lambda h: h.id)

    def same(hits: list[Hit]) -> list[tuple[str, dict[str, Any]]]:
        return [(h.id, h.payload | {"revision": 0}) for h in hits]  # accepted at other times

    assert same(edge_points) == same(their_points)
    some = [h.id for h in edge_points[:5]]
    assert stores.edge.retrieve(some) and sorted(
        (h.id, h.payload["doc_id"]) for h in stores.edge.retrieve(some)
    ) == sorted((h.id, h.payload["doc_id"]) for h in theirs.retrieve(some))
    edge_vectors, their_vectors = stores.edge.dense_vectors(some), theirs.dense_vectors(some)
    assert set(edge_vectors) == set(their_vectors) == set(some)
    for point_id in some:
        assert all(
            close(a, b)
            for a, b in zip(edge_vectors[point_id], their_vectors[point_id], strict=True)
        )
    for key in ("doc_type", "tags", "owner", "top_folder", "category"):
        assert stores.edge.facet(key, selector, 100) == theirs.facet(key, selector, 100)


def test_a_query_returns_only_the_payload_keys_asked_for(stores: Pair) -> None:
    selector = build_filter(ALICE, FilterSpec())
    order = models.OrderByQuery(order_by=models.OrderBy(key="modified_at"))
    keys = ("doc_id", "modified_at")
    full = stores.edge.query(Query(query=order, filter=selector, limit=500))
    assert len(full) > 10 and all("text" in hit.payload for hit in full)
    expected = sorted((h.id, {key: h.payload[key] for key in keys}) for h in full)
    for store in (stores.edge, *stores.others):
        lean = store.query(Query(query=order, filter=selector, limit=500, payload_keys=keys))
        assert sorted((h.id, h.payload) for h in lean) == expected


def test_an_empty_key_list_returns_ids_and_scores_only(stores: Pair) -> None:
    selector = build_filter(ALICE, FilterSpec())
    dense = models.NearestQuery(nearest=HashingEncoder().encode(["comet orbit"])[0])
    for store in (stores.edge, *stores.others):
        full = store.query(Query(query=dense, using=DENSE_VECTOR, filter=selector, limit=50))
        bare = store.query(
            Query(query=dense, using=DENSE_VECTOR, filter=selector, limit=50, payload_keys=())
        )
        assert len(full) > 10 and all("text" in hit.payload for hit in full)
        assert [h.id for h in bare] == [h.id for h in full]
        assert all(close(a.score, b.score) for a, b in zip(bare, full, strict=True))
        assert all(hit.payload == {} for hit in bare)


def test_a_batch_answers_each_query_as_alone(stores: Pair) -> None:
    selector = build_filter(ALICE, FilterSpec())
    dense = models.NearestQuery(nearest=HashingEncoder().encode(["comet orbit"])[0])
    sparse = Bm25Encoder().encode_query("comet orbit")
    batch = [
        Query(dense, 20, DENSE_VECTOR, selector, payload_keys=()),
        Query(models.NearestQuery(nearest=sparse), 20, SPARSE_VECTOR, selector, 0.1, ("doc_id",)),
    ]
    for store in (stores.edge, *stores.others):
        answers = store.query_batch(batch)
        assert len(answers) == 2 and len(answers[0]) == 20 and 0 < len(answers[1]) <= 20
        for alone, q in zip(answers, batch, strict=True):
            one = store.query(
                Query(
                    query=q.query,
                    using=q.using,
                    filter=q.filter,
                    limit=q.limit,
                    score_threshold=q.score_threshold,
                    payload_keys=q.payload_keys,
                )
            )
            assert [(h.id, h.payload) for h in alone] == [(h.id, h.payload) for h in one]
            assert all(close(a.score, b.score) for a, b in zip(alone, one, strict=True))
        assert answers[1][0].payload.keys() == {"doc_id"}


def test_retrieve_returns_only_the_payload_keys_asked_for(stores: Pair) -> None:
    selector = build_filter(ALICE, FilterSpec())
    order = models.OrderByQuery(order_by=models.OrderBy(key="modified_at"))
    some = stores.edge.query(Query(query=order, filter=selector, limit=5))
    expected = sorted((h.id, {"doc_id": h.payload["doc_id"]}) for h in some)
    for store in (stores.edge, *stores.others):
        keyed = store.retrieve([h.id for h in some], ("doc_id",))
        assert sorted((h.id, h.payload) for h in keyed) == expected
        assert all("text" in hit.payload for hit in store.retrieve([h.id for h in some]))


class KeysAsked:
    """A store that notes the payload keys every query asks for."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.asked: list[Sequence[str] | None] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def query(self, q: Query) -> list[Hit]:
        self.asked.append(q.payload_keys)
        return self.store.query(q)

    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        self.asked += [q.payload_keys for q in queries]
        return self.store.query_batch(queries)


@pytest.mark.parametrize("algorithm", [Algorithm.HYBRID, Algorithm.SEMANTIC, Algorithm.BM25])
def test_chunk_results_are_ranked_without_reading_candidate_payloads(
    stores: Pair, algorithm: Algorithm
) -> None:
    """Nothing reads a chunk candidate's payload but verify (not configured here): the engine
    is asked for ids and scores (hybrid: one query a branch, fused in the service), the page's
    payloads come whole, documents still group (hybrid reads the keys of the fused candidates
    only)."""
    branches = 2 if algorithm is Algorithm.HYBRID else 1
    for store in (stores.edge, *stores.others):
        asking = KeysAsked(store)
        chunks = SearchQuery(text="comet orbit", algorithm=algorithm, limit=7, offset=3)
        page = service(cast(Store, asking)).search(ALICE, chunks).hits
        assert asking.asked == [()] * branches
        assert len(page) == 7 and all("text" in hit.payload for hit in page)
        assert [h.id for h in page] == [h.id for h in service(store).search(ALICE, chunks).hits]
        asking.asked.clear()
        documents = replace(chunks, granularity=Granularity.DOCUMENT)
        grouped = service(cast(Store, asking)).search(ALICE, documents).hits
        assert asking.asked == ([()] * 2 if branches == 2 else [CANDIDATE_KEYS])
        assert len({(h.payload["doc_type"], h.payload["doc_id"]) for h in grouped}) == 7


def test_the_same_search_twice_gives_the_same_order(stores: Pair) -> None:
    """RRF ties are common (ranks 2+5 and 5+2 fuse to one score). The order of tied results must
    not change from one identical request to the next, or paging shows a result twice and
    another never (the service promises ranks stable from page to page)."""
    query = SearchQuery(text="comet orbit", limit=100)
    for name, store in (
        ("server", stores.server),
        ("embedded", stores.edge),
        ("engine process", stores.process),
    ):
        orders = {
            tuple(hit.id for hit in service(store).search(ALICE, query).hits) for _ in range(30)
        }
        assert len(orders) == 1, f"{name}: {len(orders)} different orders of the same results"


def test_paging_through_ties_shows_every_result_once(stores: Pair) -> None:
    for name, store in (
        ("server", stores.server),
        ("embedded", stores.edge),
        ("engine process", stores.process),
    ):
        search = service(store).search
        full = [hit.id for hit in search(ALICE, SearchQuery("comet orbit", limit=100)).hits]
        for _ in range(3):
            paged = [
                hit.id
                for offset in range(len(full))
                for hit in search(ALICE, SearchQuery("comet orbit", limit=1, offset=offset)).hits
            ]
            assert sorted(paged) == sorted(full), f"{name}: pages repeat or skip results"


# --- EdgeStore restarts ---------------------------------------------------------------------


def test_restarting_edge_store_creates_no_index_twice(tmp_path: Path) -> None:
    first = EdgeStore(tmp_path, "c")
    assert sorted(first.created_indexes) == sorted(PAYLOAD_INDEXES)
    load(first)
    count = first.count()
    first.close()
    second = EdgeStore(tmp_path, "c")
    try:
        assert second.created_indexes == []
        assert second.count() == count > 0
        result = service(second).search(ALICE, SearchQuery(text="comet", limit=3))
        assert len(result.hits) == 3
    finally:
        second.close()
    third = EdgeStore(tmp_path, "c")
    try:
        assert third.created_indexes == []
    finally:
        third.close()


def test_server_store_creates_every_payload_index() -> None:
    store = server_store()
    try:
        assert sorted(store.created_indexes) == sorted(PAYLOAD_INDEXES)
    finally:
        store.close()


# --- translate: nothing is dropped silently -------------------------------------------------

GEO = models.GeoPoint(lon=13.4, lat=52.5)
UNMAPPED: dict[str, Any] = {
    "geo_radius": models.FieldCondition(
        key="location", geo_radius=models.GeoRadius(center=GEO, radius=1000.0)
    ),
    "geo_bounding_box": models.FieldCondition(
        key="location",
        geo_bounding_box=models.GeoBoundingBox(
            top_left=models.GeoPoint(lon=13.0, lat=53.0),
            bottom_right=models.GeoPoint(lon=14.0, lat=52.0),
        ),
    ),
    "geo_polygon": models.FieldCondition(
        key="location",
        geo_polygon=models.GeoPolygon(
            exterior=models.GeoLineString(
                points=[
                    models.GeoPoint(lon=13.0, lat=52.0),
                    models.GeoPoint(lon=14.0, lat=52.0),
                    models.GeoPoint(lon=14.0, lat=53.0),
                    models.GeoPoint(lon=13.0, lat=52.0),
                ]
            )
        ),
    ),
    "values_count": models.FieldCondition(key="tags", values_count=models.ValuesCount(gte=2)),
    "datetime_range": models.FieldCondition(
        key="modified_at", range=models.DatetimeRange(gte=datetime(2026, 1, 1, tzinfo=UTC))
    ),
    "match_text": models.FieldCondition(key="title", match=models.MatchText(text="report")),
    "is_null": models.IsNullCondition(is_null=models.PayloadField(key="category")),
    "nested": models.NestedCondition(nested=models.Nested(key="items", filter=models.Filter())),
    "has_vector": models.HasVectorCondition(has_vector=DENSE_VECTOR),
}


@pytest.mark.parametrize("condition", UNMAPPED.values(), ids=UNMAPPED.keys())
def test_translate_raises_for_an_unmapped_condition(condition: Any) -> None:
    with pytest.raises(translate.UntranslatableError):
        translate.condition(condition)
    for flt in (
        models.Filter(must=[condition]),
        models.Filter(should=[condition]),
        models.Filter(must_not=[condition]),
        models.Filter(must=[models.Filter(must_not=[condition])]),
    ):
        with pytest.raises(translate.UntranslatableError):
            translate.filter_(flt)


def test_an_unmapped_condition_never_reaches_the_edge_engine(stores: Pair) -> None:
    """End to end: the engine must refuse, not answer something else than the server does."""
    condition = UNMAPPED["values_count"]
    selector = models.Filter(must=[condition])
    expected = stores.server.count(selector)
    assert expected > 0  # documents tagged both urgent and finance
    for store in (stores.edge, stores.process):
        try:
            got = store.count(selector)
        except translate.UntranslatableError:
            continue
        assert got == expected, f"Edge silently answered {got} where the server counts {expected}"


def test_translate_maps_the_shapes_the_service_sends() -> None:
    flt = build_filter(
        ALICE,
        FilterSpec(
            doc_types=("file",),
            modified_after=T0,
            modified_before=T0 + 1,
            path_prefixes=("/Projects",),
            tags_all=("urgent",),
        ),
    )
    assert isinstance(translate.filter_(flt), qe.Filter)
    assert translate.filter_(None) is None


@pytest.mark.parametrize(
    "query",
    [
        models.FusionQuery(fusion=models.Fusion.RRF),
        models.RecommendQuery(recommend=models.RecommendInput(positive=[[0.1] * 3])),
        models.SampleQuery(sample=models.Sample.RANDOM),
    ],
    ids=["plain rrf", "recommend", "sample"],
)
def test_translate_raises_for_an_unmapped_query(query: models.Query) -> None:
    with pytest.raises(translate.UntranslatableError):
        translate.query(query, None)


def test_translate_refuses_an_unnamed_vector() -> None:
    with pytest.raises(translate.UntranslatableError):
        translate.point(models.PointStruct(id="00000000-0000-0000-0000-000000000001", vector=[0.1]))


def test_whole_points_page_alike_on_every_store(stores: Pair) -> None:
    """`scroll_points` (what `migrate` copies) gives every store's points whole, vectors and
    payload, page after page (each store stamped its own write revisions)."""

    def every_point(store: Store) -> dict[str, object]:
        points: dict[str, object] = {}
        offset: str | None = None
        while True:
            page, offset = store.scroll_points(offset, 7)
            for p in page:
                payload = {k: v for k, v in (p.payload or {}).items() if k != fields.REVISION}
                points[str(p.id)] = (sorted(cast(dict[str, Any], p.vector)), payload)
            if offset is None:
                return points

    expected = every_point(stores.edge)
    assert len(expected) > 7  # more than one page
    for other in stores.others:
        assert every_point(other) == expected


def test_the_index_record_is_the_embedded_stores_and_a_server_keeps_none(stores: Pair) -> None:
    assert stores.edge.written_with() == IndexSettings.current()
    assert stores.process.written_with() == IndexSettings.current()
    assert stores.server.written_with() is None
    stores.server.record_written_with(IndexSettings.current())  # nothing to record
    assert stores.server.written_with() is None


def test_a_copy_counts_what_it_copied(stores: Pair, tmp_path: Path) -> None:
    counted = {"documents": selectors.documents(), "points": None}
    for store in (stores.edge, stores.process):
        target = store.scratch_dir()
        try:
            assert not any(target.iterdir())
            copied = store.copy_to(target, counted)
            documents = store.count(selectors.documents())
            assert copied.counts == {"documents": documents, "points": store.count()}
            assert copied.record is not None and (target / copied.record["shard"]).is_dir()
        finally:
            shutil.rmtree(target)
    server_target = stores.server.scratch_dir()
    try:
        with pytest.raises(CopyFailed, match="snapshot API"):
            stores.server.copy_to(server_target, counted)
    finally:
        shutil.rmtree(server_target)
