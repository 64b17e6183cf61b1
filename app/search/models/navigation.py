"""Navigation on the wire: the folder tree (`GET /api/v1/folders`) and a result's surrounding
text (`GET /api/v1/chunk-context`)."""

from pydantic import BaseModel, ConfigDict, Field

from app.filters.models import FilterParams
from app.search.context import MAX_CONTEXT


class FolderParams(FilterParams):
    """`GET /api/v1/folders`: the filters of `GET /viz/search` and the folder to list. Folder
    filters do not narrow the counts (the tree is what picks them), as a facet leaves out its
    own filter."""

    parent: str = Field(default="/", description="The folder whose subfolders to list.")


class Folder(BaseModel):
    path: str = Field(examples=["/Projects/Reports"])
    name: str = Field(examples=["Reports"])
    count: int = Field(description="Readable documents in it (any depth) under the filters.")
    has_children: bool = Field(description="Whether it has such subfolders in turn.")


class FoldersResponse(BaseModel):
    parent: str = Field(description="The parent as normalized.")
    folders: list[Folder]


class ChunkContextParams(BaseModel):
    """`GET /api/v1/chunk-context`: a result's document and chunk offsets."""

    model_config = ConfigDict(extra="forbid")

    doc_type: str = Field(min_length=1, max_length=32)
    doc_id: str = Field(min_length=1, max_length=256)
    start: int = Field(ge=0, description="The result's chunk_start_offset.")
    end: int = Field(ge=1, description="The result's chunk_end_offset.")
    context: int = Field(default=500, ge=0, le=MAX_CONTEXT, description="Characters each side.")


class ChunkContextResponse(BaseModel):
    success: bool = True
    chunk_text: str = Field(description="content[start:end]")
    before_context: str = Field(description="Up to `context` characters before it.")
    after_context: str = Field(description="Up to `context` characters after it.")
    has_more_before: bool
    has_more_after: bool
    chunk_index: int = Field(
        description="The chunk with these offsets (else the one holding start)."
    )
    total_chunks: int
    page_number: int | None = Field(
        default=None,
        description="That chunk's page, slide or sheet (1-based); null for unpaged documents.",
    )
