"""Service settings, read from `SEARCH_*` environment variables and a `.env` file."""

import os
import string
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LINK_TEMPLATE_PREFIX = "SEARCH_LINK_TEMPLATE_"
LINK_PLACEHOLDERS = ("doc_type", "doc_id", "file_path")


def link_templates_from_environment() -> dict[str, str]:
    """`SEARCH_LINK_TEMPLATE_<DOC_TYPE>` variables (the environment over `.env`), by doc type."""
    found = {**dotenv_values(".env"), **os.environ}
    return {
        key[len(LINK_TEMPLATE_PREFIX) :].lower(): value
        for key, value in found.items()
        if key.upper().startswith(LINK_TEMPLATE_PREFIX) and value
    }


def check_template(doc_type: str, template: str) -> None:
    """ValueError naming the variable, unless `template` is an http(s) URL whose only
    placeholders are {doc_type}, {doc_id} and {file_path} (app.search.links fills them in)."""
    variable = f"{LINK_TEMPLATE_PREFIX}{doc_type.upper()}"
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ValueError(f"{variable}: {exc}") from exc
    unknown = sorted(set(names) - set(LINK_PLACEHOLDERS))
    if unknown:
        raise ValueError(
            f"{variable}: unknown placeholder {{{unknown[0]}}} (use {{doc_type}}, {{doc_id}},"
            " {file_path})"
        )
    parts = urlsplit(template)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{variable}: must start with http:// or https:// and name a host")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SEARCH_", env_file=".env", extra="ignore")

    data_dir: Path = Path("./data")
    # Where the exported ONNX model lives; None: inside the Python environment (see model_files).
    model_dir: Path | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    collection: str = "astrolabe"
    # Server mode: how a new collection is laid out on a cluster, and the client (see
    # docs/deployment.md). An existing collection keeps the layout it was created with.
    qdrant_shard_number: int = Field(default=1, ge=1)
    qdrant_replication_factor: int = Field(default=1, ge=1)
    qdrant_write_consistency_factor: int = Field(default=1, ge=1)
    qdrant_on_disk: bool = False
    qdrant_quantization: Literal["none", "int8"] = "int8"
    qdrant_hnsw_m: int = Field(default=16, ge=4)
    qdrant_hnsw_ef_construct: int = Field(default=100, ge=4)
    qdrant_grpc: bool = False
    qdrant_timeout: float = Field(default=10.0, gt=0)
    jwt_secret: str | None = None
    api_keys_file: Path | None = None
    verify_url: str | None = None
    verify_token: str | None = None
    verify_timeout: float = Field(default=2.0, gt=0)
    rrf_k: int = Field(default=60, ge=1)
    min_free_bytes: int = Field(default=256 * 2**20, ge=0)
    # Embedded engine: past this many chunks outside the HNSW index, `serve` rebuilds it on the
    # side (app/store/embedded.py) and `ingest` and `demo` build it when they finish.
    hnsw_threshold: int = Field(default=10_000, ge=0)
    max_pending: int = Field(default=10_000, ge=1)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    # An OpenAI-compatible embedding server (`{url}/embeddings`); unset or empty: the local model.
    embedding_url: str | None = None
    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embedding_api_key: str | None = None
    mcp_enabled: bool = True  # the MCP endpoint at /mcp
    # Operations (docs/deployment.md, "Monitoring"): log lines as plain text or JSON, the
    # slow-search log threshold, and /metrics without a token on a port of its own.
    log_format: Literal["plain", "json"] = "plain"
    slow_search_seconds: float = Field(default=1.0, ge=0)
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"
    # A reranker speaking the common /rerank protocol (app.search.rerank); unset: none.
    rerank_url: str | None = None
    rerank_model: str | None = None
    rerank_api_key: str | None = None
    rerank_top_n: int = Field(default=30, ge=1, le=1000)
    # Files (POST /api/v1/files, `ingest`): the upload's bound, what an Office or OpenDocument
    # archive may expand to, and how extraction runs (worker processes, each file in a time limit).
    max_file_bytes: int = Field(default=50 * 2**20, ge=1)
    max_archive_bytes: int = Field(default=512 * 2**20, ge=1)
    max_archive_entries: int = Field(default=10_000, ge=1)
    extract_timeout: float = Field(default=300.0, gt=0)
    extract_workers: int = Field(default=1, ge=1)
    # OCR of scans and images (app.extract.ocr): Tesseract's languages, `+`-separated, each
    # installed as Debian's tesseract-ocr-<lang>. The extraction workers read it from the
    # environment (SEARCH_OCR_LANGUAGES) they inherit.
    ocr_languages: str = Field(default="eng+deu", pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$")
    # The Nextcloud connector (docs/nextcloud.md): set the URL and `serve` fills the index
    # from that instance for every connected user.
    nextcloud_url: str | None = None
    nextcloud_interval: float = Field(default=60.0, gt=0)
    nextcloud_shares_interval: float = Field(default=300.0, gt=0)
    nextcloud_concurrency: int = Field(default=4, ge=1, le=64)
    nextcloud_webhook_secret: str | None = Field(default=None, min_length=16)
    secret_key: str | None = Field(default=None, min_length=16)
    # Deep links per doc type, from SEARCH_LINK_TEMPLATE_<DOC_TYPE> (see app.search.links).
    link_templates: dict[str, str] = Field(default_factory=link_templates_from_environment)

    @field_validator("link_templates")
    @classmethod
    def _link_templates(cls, templates: dict[str, str]) -> dict[str, str]:
        for doc_type, template in templates.items():
            check_template(doc_type, template)
        return templates
