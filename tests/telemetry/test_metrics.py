"""`/metrics`: who may read it, what it counts, that its label values come from short fixed
sets (never a user id, a query or a document id), the scrape-time figures against
`/api/v1/status`, and the token-free port."""

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.filters.spec import FilterSpec
from app.routes.metrics import StatusCollector
from app.search.service import SearchQuery
from app.search.telemetry import filter_shape
from app.state import AppState
from app.telemetry.middleware import METHODS, UNMATCHED
from bench.harness.loopback import JsonHandler, free_port, loopback_server
from bench.harness.service import process_memory
from tests.helpers import (
    JWT_SECRET,
    auth,
    doc,
    index,
    running_app,
    running_app_on_engine_processes,
)

# Strings the requests below carry where a careless label would pick them up.
USER = "user-7f3a9c"
GROUP = "group-51d2"
QUERY = "zanzibar quokka"
DOC_ID = "doc-b81e44"
GONE_ID = "gone-c7d1"  # the verify source calls it forbidden
TAG = "tag-e09f"
ALGORITHMS = {"hybrid", "semantic", "bm25", "browse"}
STAGES = {"embed", "engine", "facets", "verify", "total"}


class VerifySource(JsonHandler):
    """Every document is readable but those whose id starts with `gone`; `failing` makes it
    answer 500 (verify then degrades)."""

    failing = threading.Event()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if self.failing.is_set():
            self.send_json(500, b"{}")
            return
        statuses = [
            d | {"status": "forbidden" if d["doc_id"].startswith("gone") else "ok"}
            for d in body["documents"]
        ]
        self.send_json(200, json.dumps({"documents": statuses}).encode())


@pytest.fixture(scope="module")
def verify_url() -> Iterator[str]:
    with loopback_server(VerifySource) as base:
        yield f"{base}/verify"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, verify_url: str) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("metrics") / "data"
    with running_app(data, HashingEncoder(), verify_url=verify_url) as app_client:
        index(
            app_client,
            doc(DOC_ID, f"{QUERY} in the garden", owner=USER, tags=[TAG]),
            doc(GONE_ID, f"{QUERY} that the source deleted", owner=USER),
            user=USER,
        )
        yield app_client


Samples = dict[str, list[tuple[dict[str, str], float]]]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics", headers=auth(scope="index"))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


def parse(text: str) -> Samples:
    """Sample name -> (labels, value) of each sample."""
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return sum(v for found, v in samples.get(name, []) if labels.items() <= found.items())


def test_metrics_need_a_token_with_scope_index(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=auth(scope="search")).status_code == 403
    assert client.get("/metrics", headers=auth(scope="index")).status_code == 200


def test_requests_are_counted_by_route_template_and_status(client: TestClient) -> None:
    before = scrape(client)
    path = f"/api/v1/documents/note/{DOC_ID}"
    assert client.get(path, headers=auth(USER)).status_code == 200
    assert client.get("/api/v1/documents/note/nothing", headers=auth(USER)).status_code == 404
    assert client.get("/no/such/path").status_code == 404
    after = scrape(client)
    route = "/api/v1/documents/{doc_type}/{doc_id}"
    for status in ("200", "404"):
        labels = {"method": "GET", "route": route, "status": status}
        assert (
            value(after, "astrolabe_http_requests_total", **labels)
            == value(before, "astrolabe_http_requests_total", **labels) + 1
        )
        assert value(after, "astrolabe_http_request_duration_seconds_count", **labels) >= 1
    assert value(after, "astrolabe_http_requests_total", route=UNMATCHED) >= 1


def test_searches_are_timed_by_algorithm_granularity_and_stage(client: TestClient) -> None:
    before = scrape(client)
    headers = auth(USER)
    for body in (
        {"query": QUERY, "algorithm": "semantic", "granularity": "document"},
        {"query": QUERY, "algorithm": "bm25", "include_facets": True},
        {"query": "", "tags": [TAG]},
    ):
        assert client.post("/api/v1/search", json=body, headers=headers).status_code == 200
    after = scrape(client)

    def added(**labels: str) -> float:
        name = "astrolabe_search_duration_seconds_count"
        return value(after, name, **labels) - value(before, name, **labels)

    assert added(algorithm="semantic", granularity="document", stage="embed") == 1
    assert added(algorithm="semantic", granularity="document", stage="facets") == 0
    assert added(algorithm="bm25", granularity="chunk", stage="facets") == 1
    assert added(algorithm="browse", granularity="chunk", stage="embed") == 0
    for algorithm in ("semantic", "bm25", "browse"):
        assert added(algorithm=algorithm, stage="engine") == 1
        assert added(algorithm=algorithm, stage="verify") == 1
        assert added(algorithm=algorithm, stage="total") == 1


def test_verify_outcomes_and_dropped_documents_are_counted(client: TestClient) -> None:
    before = scrape(client)
    found = client.post("/api/v1/search", json={"query": QUERY}, headers=auth(USER)).json()
    assert [r["doc_id"] for r in found["results"]] == [DOC_ID]
    VerifySource.failing.set()
    try:
        degraded = client.post("/api/v1/search", json={"query": "x"}, headers=auth(USER)).json()
    finally:
        VerifySource.failing.clear()
    assert degraded["verification"] == "degraded"
    after = scrape(client)

    def added(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert added("astrolabe_search_verifications_total", outcome="ok") == 1
    assert added("astrolabe_search_verifications_total", outcome="degraded") == 1
    assert added("astrolabe_search_verify_dropped_documents_total") == 1


def test_engine_figures_are_the_status_figures(client: TestClient) -> None:
    samples = scrape(client)
    status = client.get("/api/v1/status").json()
    assert value(samples, "astrolabe_ready") == 1
    assert value(samples, "astrolabe_engine_up") == 1
    for name, field in [
        ("astrolabe_index_documents", "documents"),
        ("astrolabe_index_chunks", "chunks"),
        ("astrolabe_ingest_pending_documents", "pending"),
        ("astrolabe_ingest_failed_documents", "failed"),
        ("astrolabe_ingest_queue_depth", "queue_depth"),
        ("astrolabe_ingest_queue_limit", "max_pending"),
        ("astrolabe_index_unindexed_chunks", "unindexed_chunks"),
        ("astrolabe_index_hnsw_chunks", "hnsw_chunks"),
    ]:
        assert value(samples, name) == status[field], name
    assert value(samples, "astrolabe_index_points") >= status["chunks"] >= 1
    assert value(samples, "astrolabe_ingest_rate_documents_per_second") > 0
    assert value(samples, "process_resident_memory_bytes") > 10 * 2**20
    [(info, _)] = samples["astrolabe_build_info"]
    assert info["backend"] == "embedded" and info["version"] == status["version"]


def test_label_values_come_from_fixed_sets(client: TestClient) -> None:
    """Requests full of user ids, group names, queries, document ids and odd methods; no label
    value of any metric may carry one, and every label value is one the code can name."""
    odd = auth(USER, [GROUP])
    client.post("/api/v1/search", json={"query": QUERY, "tags": [TAG]}, headers=odd)
    client.get("/viz/search", params={"query": QUERY, "owners": USER}, headers=odd)
    client.get(f"/api/v1/documents/note/{DOC_ID}", headers=odd)
    client.delete(f"/api/v1/documents/note/{GONE_ID}x", headers=odd)
    client.request("PROPFIND", f"/{QUERY}/{DOC_ID}")
    client.get(f"/{USER}", headers={"X-Request-ID": DOC_ID})
    samples = scrape(client)
    app = client.app
    assert isinstance(app, FastAPI)
    routes = {*app.openapi()["paths"], *(getattr(r, "path", "") for r in app.routes), UNMATCHED}
    allowed = {
        "method": METHODS | {"other"},
        "route": routes,
        "algorithm": ALGORITHMS,
        "granularity": {"chunk", "document"},
        "stage": STAGES,
        "outcome": {"ok", "skipped", "degraded"},
    }
    secrets = (USER, GROUP, QUERY, "zanzibar", DOC_ID, GONE_ID, TAG)
    for name, rows in samples.items():
        for labels, _ in rows:
            for key, label in labels.items():
                assert not any(s in label for s in secrets), (name, key, label)
                if key in allowed:
                    assert label in allowed[key], (name, key, label)
                elif key == "status":
                    assert label.isdigit() and len(label) == 3, (name, label)
    assert value(samples, "astrolabe_http_requests_total", method="other") >= 1


def test_the_metrics_port_serves_without_a_token(tmp_path: Path) -> None:
    port = free_port()
    with running_app(tmp_path / "data", HashingEncoder(), metrics_port=port) as client:
        index(client, doc("1", "one"))
        response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        assert response.status_code == 200
        samples = parse(response.text)
        assert value(samples, "astrolabe_index_documents") == 1
        assert value(samples, "astrolabe_http_requests_total", route="/api/v1/documents") == 1
        assert client.get("/metrics").status_code == 401  # the main port still asks
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)


def test_a_service_still_loading_reports_only_that_it_is_not_ready() -> None:
    state = AppState(Settings(jwt_secret=JWT_SECRET), Authenticator(JWT_SECRET, {}))
    families = list(StatusCollector(state).collect())
    assert [(f.name, [s.value for s in f.samples]) for f in families] == [
        ("astrolabe_ready", [0.0])
    ]


def test_the_filter_shape_names_fields_and_floors_never_values() -> None:
    spec = FilterSpec(tags=("secret-tag",), owners=("bob",), modified_after=1)
    query = SearchQuery(text="q", spec=spec, min_relevance=0.5, score_threshold=0.1)
    assert filter_shape(query) == [
        "modified_after",
        "tags",
        "owners",
        "min_relevance",
        "score_threshold",
    ]
    assert filter_shape(SearchQuery(text="q")) == []


def test_engine_processes_are_reported_beside_the_http_process(tmp_path: Path) -> None:
    """As `serve` runs it, the engine is a child process whose memory the process collector
    (this process) leaves out: /metrics gives it, and the rebuilds that status counts."""
    with running_app_on_engine_processes(tmp_path / "data", HashingEncoder()) as (client, engine):
        index(client, doc("1", "one"))
        samples = scrape(client)
        status = client.get("/api/v1/status", headers=auth()).json()
        served = engine._served
        assert served is not None
        memory = {p.pid: p.rss_mib * 2**20 for p in process_memory(os.getpid())}  # VmRSS
        serving = value(samples, "astrolabe_engine_resident_memory_bytes", role="serving")
        assert serving > 20 * 2**20
        assert serving == pytest.approx(memory[served.process.pid], rel=0.25)
        assert value(samples, "process_resident_memory_bytes") == pytest.approx(
            memory[os.getpid()], rel=0.25
        )
        assert [
            labels["role"] for labels, _ in samples["astrolabe_engine_resident_memory_bytes"]
        ] == ["serving"]
        assert value(samples, "astrolabe_index_hnsw_rebuilds_total") == status["hnsw_rebuilds"] == 0
        assert value(samples, "astrolabe_index_hnsw_rebuilding") == status["hnsw_rebuilding"] == 0
