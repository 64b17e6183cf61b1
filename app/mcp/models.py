"""What the MCP tools return as structured content (each tool's output schema)."""

from pydantic import BaseModel, Field

from app.filters.models import AppliedFilters
from app.ingest.models import DocumentStatus
from app.search.models.results import SearchResponse, SearchResult
from app.status import StatusResponse


class HitContext(BaseModel):
    """The document's text on either side of the result's chunk."""

    before_context: str = Field(description="Text just before the chunk.")
    after_context: str = Field(description="Text just after the chunk.")
    has_more_before: bool = Field(description="The document has more text before this.")
    has_more_after: bool = Field(description="The document has more text after this.")


class ToolSearchResult(SearchResult):
    context: HitContext | None = Field(
        default=None, description="With include_context: the text around the chunk."
    )


class ToolSearchResponse(SearchResponse):
    """The response of `POST /api/v1/search`; results may carry their context."""

    # Narrower items than the base's (each SearchResult may carry a context): safe, as the
    # response is built once from the HTTP response and never assigned a plain result list.
    results: list[ToolSearchResult]  # type: ignore[assignment]


class FacetsResponse(BaseModel):
    total_documents: int = Field(
        description="Documents the user can see that match the filters (each counted once)."
    )
    facets: dict[str, dict[str, int]] = Field(
        description="Per field (doc_type, tags, category, owner, folders: top-level folders):"
        " value -> matching documents, each counted under all the *other* filters."
    )
    filters: AppliedFilters = Field(description="The filters as applied (normalized).")


class DocumentInfo(DocumentStatus):
    """`GET /api/v1/documents/{doc_type}/{doc_id}`, for a document the user can see."""


class IndexStatus(StatusResponse):
    """`GET /api/v1/status`, plus how many documents this user can see."""

    visible_documents: int = Field(description="Indexed documents the calling user can see.")
