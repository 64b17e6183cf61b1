"""Authentication, scopes and the one error envelope of API.md, on the real app."""

import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import jwt
import pytest
from fastapi.testclient import TestClient

from app.auth import ApiKeysFileError, Authenticator, Principal, load_api_keys
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import build_authenticator, create_app
from tests.helpers import JWT_SECRET, auth, doc, index, running_app

SEARCH = "/api/v1/search"
OTHER = "another-secret-that-is-long-enough-for-hs256"
DOCUMENT = "/api/v1/documents/note/1"


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app for the read-only error cases of this module; it holds document note:1."""
    with running_app(tmp_path_factory.mktemp("auth") / "data", HashingEncoder()) as client:
        index(client, doc("1", "the only document"))
        yield client


class Response(Protocol):
    """What the assertions read of a TestClient response (httpx or httpx2)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


def envelope(response: Response, status: int, code: str, field: str | None = None) -> str:
    """Asserts the exact error body of API.md and returns its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "field"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["field"] == field, body
    message = body["error"]["message"]
    assert isinstance(message, str) and message, body
    return message


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def signed(claims: dict[str, Any], secret: str = JWT_SECRET, algorithm: str = "HS256") -> str:
    with warnings.catch_warnings():  # HS512 with the service's (short for SHA-512) secret
        warnings.simplefilter("ignore", jwt.warnings.InsecureKeyLengthWarning)
        return jwt.encode(claims, secret, algorithm=algorithm)


def later(seconds: int = 600) -> int:
    return int(time.time()) + seconds


# --- 401 ------------------------------------------------------------------------------------

UNAUTHENTICATED: dict[str, dict[str, str]] = {
    "missing header": {},
    "empty header": {"Authorization": ""},
    "basic scheme": {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    "scheme only": {"Authorization": "Bearer"},
    "garbage token": bearer("not-a-token"),
    "garbage jwt shape": bearer("aaa.bbb.ccc"),
    "other secret": bearer(
        signed({"sub": "alice", "exp": later(), "scope": "search index"}, OTHER)
    ),
    "expired": bearer(signed({"sub": "alice", "exp": later(-60), "scope": "search index"})),
    "no sub": bearer(signed({"exp": later(), "scope": "search index"})),
    "empty sub": bearer(signed({"sub": "", "exp": later(), "scope": "search index"})),
    "no exp": bearer(signed({"sub": "alice", "scope": "search index"})),
    "groups not a list": bearer(
        signed({"sub": "alice", "exp": later(), "groups": "eng", "scope": "search"})
    ),
    "alg none": bearer(
        jwt.encode({"sub": "alice", "exp": later(), "scope": "search"}, None, algorithm="none")
    ),
    "HS512": bearer(
        signed({"sub": "alice", "exp": later(), "scope": "search index"}, algorithm="HS512")
    ),
}


@pytest.mark.parametrize("headers", UNAUTHENTICATED.values(), ids=UNAUTHENTICATED.keys())
def test_search_without_a_valid_token_is_401(
    app_client: TestClient, headers: dict[str, str]
) -> None:
    response = app_client.post(SEARCH, json={"query": "document"}, headers=headers)
    envelope(response, 401, "unauthenticated")
    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("headers", UNAUTHENTICATED.values(), ids=UNAUTHENTICATED.keys())
def test_document_endpoints_without_a_valid_token_are_401(
    app_client: TestClient, headers: dict[str, str]
) -> None:
    envelope(app_client.get(DOCUMENT, headers=headers), 401, "unauthenticated")
    envelope(app_client.delete(DOCUMENT, headers=headers), 401, "unauthenticated")
    posted = app_client.post("/api/v1/documents", json={"documents": [doc("2")]}, headers=headers)
    envelope(posted, 401, "unauthenticated")
    envelope(app_client.get("/viz/search", headers=headers), 401, "unauthenticated")
    # nothing was written or deleted on the way
    assert app_client.get(DOCUMENT, headers=auth()).status_code == 200
    assert app_client.get("/api/v1/documents/note/2", headers=auth()).status_code == 404


def test_a_valid_jwt_is_accepted(app_client: TestClient) -> None:
    token = signed({"sub": "alice", "exp": later(), "scope": "search index"})
    response = app_client.post(SEARCH, json={"query": ""}, headers=bearer(token))
    assert response.status_code == 200, response.text
    assert [r["doc_id"] for r in response.json()["results"]] == ["1"]


# --- static API keys ------------------------------------------------------------------------


def test_static_api_key_authenticates_with_its_own_scopes(tmp_path: Path) -> None:
    keys = {
        "key-search-kate": Principal("kate", ("eng",), frozenset({"search"})),
        "key-writer": Principal("robot", (), frozenset({"index"})),
    }
    with running_app(tmp_path, HashingEncoder(), api_keys=keys) as client:
        written = client.post(
            "/api/v1/documents?wait=true",
            json={"documents": [doc("k", "team memo", owner="bob", acl=["group:eng"])]},
            headers=bearer("key-writer"),
        )
        assert written.status_code == 200, written.text
        found = client.post(SEARCH, json={"query": ""}, headers=bearer("key-search-kate"))
        assert found.status_code == 200, found.text
        assert [r["doc_id"] for r in found.json()["results"]] == ["k"]
        for wrong in ("key-search-kat", "key-search-kate2", "KEY-SEARCH-KATE", "key-writer "):
            response = client.post(SEARCH, json={"query": ""}, headers=bearer(wrong))
            if wrong == "key-writer ":  # trailing blank is stripped: a valid key without scope
                envelope(response, 403, "forbidden")
            else:
                envelope(response, 401, "unauthenticated")
        denied = client.post(
            "/api/v1/documents", json={"documents": [doc("x")]}, headers=bearer("key-search-kate")
        )
        envelope(denied, 403, "forbidden")


def test_load_api_keys_reads_the_documented_file_format(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(
        json.dumps(
            {
                "k-alice": {"sub": "alice", "groups": ["eng", "ops"], "scope": "search index"},
                "k-bot": {"sub": "bot", "scope": "index"},
            }
        ),
        encoding="utf-8",
    )
    assert load_api_keys(path) == {
        "k-alice": Principal("alice", ("eng", "ops"), frozenset({"search", "index"})),
        "k-bot": Principal("bot", (), frozenset({"index"})),
    }


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '["k-alice"]',
        '{"k": {"groups": ["eng"], "scope": "search"}}',
        '{"k": {"sub": "alice", "groups": "eng"}}',
        '{"k": {"sub": "alice", "scope": ["search"]}}',
    ],
    ids=["not json", "a list", "entry without sub", "groups not a list", "scope not a string"],
)
def test_load_api_keys_rejects_a_bad_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "keys.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ApiKeysFileError):
        load_api_keys(path)


def test_load_api_keys_rejects_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ApiKeysFileError, match="cannot read API keys file"):
        load_api_keys(tmp_path / "absent.json")


def test_api_keys_file_from_the_environment_configures_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"env-key": {"sub": "alice", "scope": "search"}}), "utf-8")
    monkeypatch.delenv("SEARCH_JWT_SECRET", raising=False)
    monkeypatch.setenv("SEARCH_API_KEYS_FILE", str(path))
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path / "data"))
    settings = Settings()
    assert settings.api_keys_file == path
    authenticator = build_authenticator(settings)
    assert authenticator.configured
    assert authenticator.authenticate("Bearer env-key") == Principal(
        "alice", (), frozenset({"search"})
    )
    app = create_app(settings, dense=HashingEncoder())
    with TestClient(app) as client:
        assert app.state.astrolabe.ready.wait(timeout=120)
        ok = client.post(SEARCH, json={"query": ""}, headers=bearer("env-key"))
        assert ok.status_code == 200, ok.text
        # no JWT secret configured: even a well-formed JWT is not a credential
        envelope(client.post(SEARCH, json={}, headers=auth()), 401, "unauthenticated")


def test_authenticator_without_any_credential_source_is_not_configured() -> None:
    assert not Authenticator(None, {}).configured
    assert Authenticator(JWT_SECRET, {}).configured
    assert Authenticator(None, {"k": Principal("a")}).configured


def test_serve_without_any_auth_configured_refuses_to_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCH_")}
    env["SEARCH_DATA_DIR"] = str(tmp_path / "data")
    project = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(project)
    done = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--port", "0"],
        cwd=tmp_path,  # no .env file here
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    message = done.stderr
    assert "refusing to start" in message
    assert "SEARCH_JWT_SECRET" in message and "SEARCH_API_KEYS_FILE" in message
    assert "--dev" in message
    assert "Traceback" not in message


# --- 403 ------------------------------------------------------------------------------------


def test_index_scope_alone_cannot_search(app_client: TestClient) -> None:
    headers = auth(scope="index")
    envelope(app_client.post(SEARCH, json={"query": "x"}, headers=headers), 403, "forbidden")
    envelope(app_client.get("/viz/search", headers=headers), 403, "forbidden")


def test_search_scope_alone_cannot_touch_documents(app_client: TestClient) -> None:
    headers = auth(scope="search")
    posted = app_client.post("/api/v1/documents", json={"documents": [doc("3")]}, headers=headers)
    envelope(posted, 403, "forbidden")
    envelope(app_client.get(DOCUMENT, headers=headers), 403, "forbidden")
    envelope(app_client.delete(DOCUMENT, headers=headers), 403, "forbidden")
    assert app_client.get(DOCUMENT, headers=auth()).status_code == 200
    assert app_client.get("/api/v1/documents/note/3", headers=auth()).status_code == 404


def test_a_token_without_any_scope_is_403_everywhere(app_client: TestClient) -> None:
    headers = bearer(signed({"sub": "alice", "exp": later()}))
    envelope(app_client.post(SEARCH, json={}, headers=headers), 403, "forbidden")
    envelope(app_client.get(DOCUMENT, headers=headers), 403, "forbidden")


# --- open endpoints -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/status", "/healthz", "/readyz", "/viz"])
def test_open_endpoints_need_no_token(app_client: TestClient, path: str) -> None:
    response = app_client.get(path)
    assert response.status_code == 200, response.text
    if path == "/viz":
        assert response.headers["content-type"].startswith("text/html")
    if path == "/api/v1/status":
        assert response.json()["documents"] == 1


# --- 400 ------------------------------------------------------------------------------------

BAD_SEARCH_BODIES: list[tuple[str, Any]] = [
    ("limit", 0),
    ("limit", 101),
    ("limit", "10"),
    ("limit", True),
    ("limit", 2.5),
    ("offset", -1),
    ("offset", 10_001),
    ("offset", "1"),
    ("algorithm", "x"),
    ("algorithm", "HYBRID"),
    ("fusion", "x"),
    ("granularity", "x"),
    ("query", "q" * 10_001),
    ("query", 42),
    ("score_threshold", -1),
    ("score_threshold", "0.5"),
    ("doc_types", "file"),
    ("doc_types", [1]),
    ("tags", "urgent"),
    ("include_facets", "yes"),
    ("include_facets", 1),
]


@pytest.mark.parametrize(
    ("field", "value"),
    BAD_SEARCH_BODIES,
    ids=[f"{f}={str(v)[:12]}" for f, v in BAD_SEARCH_BODIES],
)
def test_invalid_search_field_is_400_naming_it(
    app_client: TestClient, field: str, value: Any
) -> None:
    response = app_client.post(SEARCH, json={field: value}, headers=auth())
    named = f"{field}[0]" if isinstance(value, list) else field  # the offending list item
    message = envelope(response, 400, "invalid_request", named)
    assert named in message


def test_search_limits_at_the_bounds_are_accepted(app_client: TestClient) -> None:
    body = {"query": "q" * 10_000, "limit": 100, "offset": 10_000, "score_threshold": 0}
    response = app_client.post(SEARCH, json=body, headers=auth())
    assert response.status_code == 200, response.text
    one = app_client.post(SEARCH, json={"limit": 1, "offset": 0}, headers=auth())
    assert one.status_code == 200, one.text


def test_search_body_that_is_not_json_is_400(app_client: TestClient) -> None:
    headers = auth() | {"Content-Type": "application/json"}
    response = app_client.post(SEARCH, content=b'{"query": "x"', headers=headers)
    assert "JSON" in envelope(response, 400, "invalid_request")


@pytest.mark.parametrize("body", [[], ["query"], "query", 3, None])
def test_search_body_that_is_not_an_object_is_400(app_client: TestClient, body: Any) -> None:
    headers = auth() | {"Content-Type": "application/json"}
    response = app_client.post(SEARCH, content=json.dumps(body).encode(), headers=headers)
    envelope(response, 400, "invalid_request")


VIZ_PARAMS: list[tuple[str, str]] = [
    ("limit", "0"),
    ("limit", "51"),
    ("limit", "ten"),
    ("algorithm", "x"),
    ("fusion", "x"),
    ("modified_after", "2026-13-01"),
    ("query", "q" * 10_001),
]


@pytest.mark.parametrize(
    ("field", "value"), VIZ_PARAMS, ids=[f"{f}={v[:12]}" for f, v in VIZ_PARAMS]
)
def test_invalid_viz_parameter_is_400_naming_it(
    app_client: TestClient, field: str, value: str
) -> None:
    response = app_client.get("/viz/search", params={field: value}, headers=auth())
    assert field in envelope(response, 400, "invalid_request", field)


# --- 404 / 405 ------------------------------------------------------------------------------


def test_unknown_document_is_404_not_found(app_client: TestClient) -> None:
    response = app_client.get("/api/v1/documents/note/unknown", headers=auth())
    assert "note:unknown" in envelope(response, 404, "not_found")
    other_type = app_client.get("/api/v1/documents/file/1", headers=auth())
    envelope(other_type, 404, "not_found")
    envelope(app_client.delete("/api/v1/documents/note/unknown", headers=auth()), 404, "not_found")


@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/nope", "/api/v1/documents/note"])
def test_unknown_route_has_the_envelope(app_client: TestClient, path: str) -> None:
    envelope(app_client.get(path, headers=auth()), 404, "not_found")


def test_wrong_method_has_the_envelope(app_client: TestClient) -> None:
    response = app_client.get(SEARCH, headers=auth())
    assert response.status_code == 405
    assert set(response.json()["error"]) == {"code", "message", "field"}


# --- 413 ------------------------------------------------------------------------------------


def test_body_over_the_limit_is_413(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder(), max_body_bytes=2048) as client:
        small = client.post(SEARCH, json={"query": "x" * 1000}, headers=auth())
        assert small.status_code == 200, small.text
        big = client.post(SEARCH, json={"query": "x" * 3000}, headers=auth())
        envelope(big, 413, "payload_too_large")
        batch = {"documents": [doc("big", "word " * 1000)]}
        envelope(
            client.post("/api/v1/documents", json=batch, headers=auth()), 413, "payload_too_large"
        )
        assert client.get("/api/v1/documents/note/big", headers=auth()).status_code == 404


def test_streamed_body_over_the_limit_is_413(tmp_path: Path) -> None:
    """Without a Content-Length (chunked upload) the limit is enforced by counting."""

    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    with running_app(tmp_path, HashingEncoder(), max_body_bytes=2048) as client:
        headers = auth() | {"Content-Type": "application/json"}
        response = client.post(SEARCH, content=chunks(), headers=headers)
        assert "content-length" not in {k.lower() for k in response.request.headers}
        envelope(response, 413, "payload_too_large")
