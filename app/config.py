"""Service settings, read from `SEARCH_*` environment variables and a `.env` file."""

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    qdrant_quantization: Literal["none", "int8"] = "none"
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
