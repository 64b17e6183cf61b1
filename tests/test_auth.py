"""Authentication and scopes on the real app: JWTs, static API keys, 401 / 403, the open
endpoints and `GET /api/v1/me`."""

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

from app.auth import ApiKeysFileError, Authenticator, Principal, build_authenticator, load_api_keys
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import create_app
from tests.helpers import JWT_SECRET, auth, doc, envelope, running_app

SEARCH = "/api/v1/search"
OTHER = "another-secret-that-is-long-enough-for-hs256"
DOCUMENT = "/api/v1/documents/note/1"


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
        jwt.encode({"sub": "alice", "exp": later(), "scope": "search"}, "", algorithm="none")
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
    assert authenticator.authenticate("env-key") == Principal("alice", (), frozenset({"search"}))
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


# --- who am I -------------------------------------------------------------------------------


def test_me_answers_who_any_valid_token_is(app_client: TestClient) -> None:
    response = app_client.get("/api/v1/me", headers=auth("carol", ["eng", "ops"], scope=""))
    assert response.status_code == 200
    assert response.json() == {"sub": "carol", "groups": ["eng", "ops"], "scopes": []}
    both = app_client.get("/api/v1/me", headers=auth("dave")).json()
    assert both == {"sub": "dave", "groups": [], "scopes": ["index", "search"]}
    envelope(app_client.get("/api/v1/me"), 401, "unauthenticated")
    envelope(app_client.get("/api/v1/me", headers=bearer("nope")), 401, "unauthenticated")
