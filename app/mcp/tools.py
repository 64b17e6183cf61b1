"""The MCP tools: `search`, `list_facets`, `get_document`, `index_status`. Each parses its
arguments with the HTTP API's request model and calls the service the HTTP route calls, as the
user of the request's bearer token; their descriptions are what a model reads to use them."""

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.config import JsonDict

from app.auth import Principal
from app.errors import InvalidRequest, NotFound, ServiceError, describe_validation
from app.filters.models import FILTERS, FilterFields
from app.filters.spec import MAX_FOLDERS
from app.ingest.models import DOC_TYPE_PATTERN
from app.mcp.gate import principal_in
from app.mcp.models import (
    DocumentInfo,
    FacetsResponse,
    HitContext,
    IndexStatus,
    ToolSearchResponse,
)
from app.mcp.render import render_document, render_facets, render_hits, render_status
from app.search.algorithms import Algorithm, FusionMethod
from app.search.documents import DocumentReader
from app.search.models.navigation import ChunkContextParams
from app.search.models.requests import MAX_QUERY_CHARS, SearchBody
from app.search.service import Granularity, SortOrder
from app.state import AppState, Services
from app.status import StatusFigures, StatusResponse

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
MAX_CONTEXT_CHARS = 2_000  # per side and result: a page of 100 results must fit a model's context

SEARCH_DESCRIPTION = """Search the user's documents (notes, files, deck cards, news items, ...)
by meaning and keywords, optionally narrowed by filters. Returns the best matching passages
(chunks), each with its document's type, id, title, owner, modified date, folder path, tags and
category, best first. Only documents the calling user may read are ever returned.

- query: what to look for, in natural language or keywords. Empty = browse: the newest
  documents matching the filters, newest first (score 0).
- Filters narrow the results and combine with AND; inside one list, any value matches (OR),
  except tags_all. They are applied inside the engine, so a narrow filter still fills the page.
- Each result has a relevance in [0, 1]: hybrid (default, semantic and keyword rankings fused)
  gives 1 to a result both rankings put first; semantic is the cosine similarity (about 0.2
  weak to 0.8 strong); bm25 is the keyword score over the best one of the answer. `score` is
  the algorithm's own scale. total_found counts the matches for this user (exact when
  browsing); strong_found how many of them match well (cosine 0.35 or half the best keyword
  score; 0: nothing matched well, try other words), and each result says whether it is strong.
- Use list_facets first to see which doc types, tags, categories, owners and folders exist,
  and get_document to check one document's metadata and status."""

LIST_FACETS_DESCRIPTION = """Count the documents the calling user can see, per document type,
tag, category, owner and top-level folder, under the given filters (each count is taken under
all the *other* filters, so it says how many documents choosing that value would give). Use it
to discover what to filter on before searching, e.g. which folders or tags exist. Filters
work as in `search`."""

GET_DOCUMENT_DESCRIPTION = """Get one document's metadata and indexing status by its doc_type
and doc_id (as returned by `search`): title, owner, modified date (RFC 3339 UTC), file path,
tags, category, MIME type, status (indexed, pending or failed) and its number of chunks. A
document the user may not read is reported as not found."""

INDEX_STATUS_DESCRIPTION = """Report the state of the search index: documents, chunks and
documents waiting to be indexed (pending) or failed, in the whole index; how many documents
the calling user can see; the embedding model and its dimension; the engine backend
(embedded or server); the supported algorithms and fusions."""


def error_result(exc: ServiceError) -> CallToolResult:
    """A tool error with the message of the HTTP API's error envelope."""
    envelope = {"error": {"code": exc.code, "message": exc.message, "field": exc.field}}
    return CallToolResult(
        content=[TextContent(text=exc.message)], structured_content=envelope, is_error=True
    )


def invalid_arguments(errors: Sequence[Any]) -> InvalidRequest:
    """Pydantic's errors about tool arguments, described as the HTTP API describes a body's
    (located in the body: "query" is a field here, not the query string)."""
    in_body = [{**error, "loc": ("body", *error["loc"])} for error in errors]
    return InvalidRequest(*describe_validation(in_body))


def parse_search_body(arguments: dict[str, Any]) -> SearchBody:
    """The HTTP API's request model, with its messages for what it rejects."""
    try:
        return SearchBody.model_validate({k: v for k, v in arguments.items() if v is not None})
    except ValidationError as exc:
        raise invalid_arguments(exc.errors()) from exc


Work = Callable[[Principal, Services], Awaitable[tuple[BaseModel, str]]]
Tool = TypeVar("Tool", bound=Callable[..., Any])


def publishes_filters(tool: Tool) -> Tool:
    """`tool` publishes the filters of `FilterFields` (their types and descriptions, declared
    there once) as keyword parameters, and takes them as `**filters`: the MCP library builds a
    tool's input schema from its signature."""
    signature = inspect.signature(tool)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    added = {name: _published(name) for name in FILTERS}
    tool.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=own
        + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint)
            for name, hint in added.items()
        ]
    )
    tool.__annotations__ = {k: v for k, v in tool.__annotations__.items() if k != "filters"} | added
    return tool


def _published(name: str) -> Any:
    field = FilterFields.model_fields[name]
    # The folder limit counts folders after normalization (duplicates and blanks dropped), so
    # the request model enforces it with the HTTP API's message; here it is only published.
    extra: JsonDict | None = {"maxItems": MAX_FOLDERS} if name == "path_prefixes" else None
    described = Field(description=field.description, json_schema_extra=extra)
    return Annotated[(field.annotation, *field.metadata, described)]


def register_tools(server: MCPServer[Any], state: AppState) -> None:
    async def answer(ctx: Context, work: Work) -> CallToolResult:
        try:
            principal = principal_in(getattr(ctx.request_context.request, "scope", None))
            structured, text = await work(principal, state.require_services())
        except ServiceError as exc:
            return error_result(exc)
        return CallToolResult(
            content=[TextContent(text=text)],
            structured_content=structured.model_dump(mode="json"),
        )

    @server.tool(title="Search documents", description=SEARCH_DESCRIPTION, annotations=READ_ONLY)
    @publishes_filters
    async def search(
        ctx: Context,
        query: Annotated[
            StrictStr,
            Field(
                max_length=MAX_QUERY_CHARS,
                description="What to look for. Empty = browse, newest first.",
            ),
        ] = "",
        limit: Annotated[
            StrictInt, Field(ge=1, le=100, description="How many results to return.")
        ] = 10,
        algorithm: Annotated[
            Algorithm,
            Field(
                description="hybrid: semantic + keyword, fused (best default); semantic: by"
                " meaning only (paraphrases, other wording); bm25: exact keywords only (names,"
                " codes, rare terms)."
            ),
        ] = Algorithm.HYBRID,
        fusion: Annotated[
            FusionMethod,
            Field(
                description="hybrid only: rrf (rank fusion, default), dbsf or convex (score"
                " fusions)."
            ),
        ] = FusionMethod.RRF,
        granularity: Annotated[
            Granularity,
            Field(
                description="chunk: every matching passage (a long document may appear several"
                " times); document: only the best passage of each document."
            ),
        ] = Granularity.CHUNK,
        score_threshold: Annotated[
            float,
            Field(
                ge=0,
                allow_inf_nan=False,
                strict=True,
                description="Drop results scoring below this, on the algorithm's own scale"
                " (see the description); 0 keeps everything.",
            ),
        ] = 0.0,
        sort: Annotated[
            SortOrder | None,
            Field(
                description="relevance (default with a query), newest or oldest (by the"
                " modified date; default when browsing): a date sort orders every match."
            ),
        ] = None,
        include_context: Annotated[
            StrictBool,
            Field(
                description="Add each result's surrounding text (before_context,"
                " after_context) to read a passage in its context."
            ),
        ] = False,
        context_chars: Annotated[
            StrictInt,
            Field(
                ge=0,
                le=MAX_CONTEXT_CHARS,
                description="With include_context: characters of context on each side.",
            ),
        ] = 300,
        **filters: Any,
    ) -> Annotated[CallToolResult, ToolSearchResponse]:
        arguments = filters | {
            "query": query,
            "limit": limit,
            "algorithm": algorithm,
            "fusion": fusion,
            "granularity": granularity,
            "score_threshold": score_threshold,
            "sort": sort,
        }

        async def work(principal: Principal, services: Services) -> tuple[BaseModel, str]:
            body = parse_search_body(arguments)
            found = await asyncio.to_thread(run_search, services, principal, body)
            if include_context:
                await asyncio.to_thread(add_context, services, principal, found, context_chars)
            return found, render_hits(found)

        return await answer(ctx, work)

    @server.tool(
        title="Count documents by field", description=LIST_FACETS_DESCRIPTION, annotations=READ_ONLY
    )
    @publishes_filters
    async def list_facets(
        ctx: Context, **filters: Any
    ) -> Annotated[CallToolResult, FacetsResponse]:
        async def work(principal: Principal, services: Services) -> tuple[BaseModel, str]:
            # A browse of one result with facets: the HTTP search, its count and its chips.
            body = parse_search_body(filters | {"limit": 1, "include_facets": True})
            found = await asyncio.to_thread(run_search, services, principal, body)
            counted = FacetsResponse(
                total_documents=found.total_found,
                facets=found.facets or {},
                filters=found.filters,
            )
            return counted, render_facets(counted)

        return await answer(ctx, work)

    @server.tool(
        title="Get one document", description=GET_DOCUMENT_DESCRIPTION, annotations=READ_ONLY
    )
    async def get_document(
        ctx: Context,
        doc_type: Annotated[
            StrictStr,
            Field(
                pattern=DOC_TYPE_PATTERN,
                description='The document\'s type, as in search results (e.g. "file").',
            ),
        ],
        doc_id: Annotated[
            StrictStr,
            Field(
                min_length=1,
                max_length=256,
                description="The document's id within its type, as in search results.",
            ),
        ],
    ) -> Annotated[CallToolResult, DocumentInfo]:
        async def work(principal: Principal, services: Services) -> tuple[BaseModel, str]:
            info = await asyncio.to_thread(read_document, services, principal, doc_type, doc_id)
            return info, render_document(info)

        return await answer(ctx, work)

    @server.tool(title="Index status", description=INDEX_STATUS_DESCRIPTION, annotations=READ_ONLY)
    async def index_status(ctx: Context) -> Annotated[CallToolResult, IndexStatus]:
        async def work(principal: Principal, services: Services) -> tuple[BaseModel, str]:
            report = await asyncio.to_thread(read_status, state, services, principal)
            return report, render_status(report)

        return await answer(ctx, work)


def run_search(services: Services, principal: Principal, body: SearchBody) -> ToolSearchResponse:
    """The search of `POST /api/v1/search`, in its response shape."""
    response = services.search.search(principal, body)
    return ToolSearchResponse.model_validate(response.model_dump(exclude_unset=True))


def reader_of(services: Services) -> DocumentReader:
    search = services.search.service
    return DocumentReader(services.store, search.verifier, search.forget_missing)


def add_context(
    services: Services, principal: Principal, found: ToolSearchResponse, chars: int
) -> None:
    """Each result's surrounding text from the chunk-context service, by its chunk offsets
    (none for a document indexed before offsets were kept, or changed meanwhile)."""
    for result in found.results:
        if result.chunk_start_offset is None or result.chunk_end_offset is None:
            continue
        where = ChunkContextParams(
            doc_type=result.doc_type,
            doc_id=result.doc_id,
            start=result.chunk_start_offset,
            end=result.chunk_end_offset,
            context=chars,
        )
        try:
            around = services.navigation.chunk_context(principal, where)
        except (NotFound, InvalidRequest):
            continue
        result.context = HitContext(
            before_context=around.before_context,
            after_context=around.after_context,
            has_more_before=around.has_more_before,
            has_more_after=around.has_more_after,
        )


def read_document(
    services: Services, principal: Principal, doc_type: str, doc_id: str
) -> DocumentInfo:
    """Only a document the user can see; any other is 'not found', as if it did not exist."""
    if not reader_of(services).is_visible(principal, (doc_type, doc_id)):
        raise NotFound(f"no document {doc_type}:{doc_id}")
    return DocumentInfo(**services.ingest.status(doc_type, doc_id).model_dump())


def read_status(state: AppState, services: Services, principal: Principal) -> IndexStatus:
    report = StatusResponse.of(state.settings, StatusFigures.of(services))
    visible = reader_of(services).count_visible(principal)
    return IndexStatus(**report.model_dump(), visible_documents=visible)
