"""Which dense encoder the service uses: the local model, or an embedding server when
`SEARCH_EMBEDDING_URL` is set (after its probe proved it computes the same vectors); and which
one embeds the search texts."""

import logging
from typing import TYPE_CHECKING

from app.config import Settings
from app.embeddings.dense import DenseEncoder, MiniLMEncoder

if TYPE_CHECKING:
    from app.embeddings.remote import RemoteEncoder

log = logging.getLogger(__name__)


def open_remote_encoder(url: str, settings: Settings) -> "RemoteEncoder":
    """Raises EmbeddingMismatch, EmbeddingServerError or EmbeddingUnavailable: the start fails.
    Its HTTP client is imported here: without an embedding server a start does without it."""
    from app.embeddings.remote import RemoteEncoder, reference_probe_vector

    encoder = RemoteEncoder(url, settings.embedding_model, settings.embedding_api_key)
    try:
        similarity = encoder.check_probe(reference_probe_vector())
    except Exception:
        encoder.close()
        raise
    log.info("embedding server %s matches the local model (probe cosine %.5f)", url, similarity)
    return encoder


def open_dense_encoder(settings: Settings) -> DenseEncoder:
    if settings.embedding_url:
        return open_remote_encoder(settings.embedding_url, settings)
    return MiniLMEncoder(settings.model_dir)


def for_queries(model: DenseEncoder) -> DenseEncoder:
    """What searches embed their texts with: the local model's int8 query graph; an embedding
    server (or a test's encoder) embeds queries as it embeds documents."""
    return model.queries if isinstance(model, MiniLMEncoder) else model
