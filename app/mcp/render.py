"""The short text each tool returns beside its structured content, for clients that read only
text: one line per hit or value, the passage cut short."""

from app.mcp.models import DocumentInfo, FacetsResponse, IndexStatus, ToolSearchResponse

EXCERPT_CHARS = 300
CONTEXT_CHARS = 150


def _short(text: str, chars: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[:chars].rsplit(" ", 1)[0] + " ..."


def _short_tail(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else "... " + flat[-chars:].split(" ", 1)[-1]


def _strong(strong_found: int | None) -> str:
    if strong_found is None:
        return ""
    return f", {strong_found} of them strong matches" if strong_found else ", none matching well"


def render_hits(found: ToolSearchResponse) -> str:
    browse = not found.query.strip()
    what = "newest documents" if browse else f"results for {found.query!r}"
    lines = [
        f"{len(found.results)} {what} ({found.algorithm}, {found.granularity}),"
        f" {found.total_found} matching in total{_strong(found.strong_found)}."
    ]
    for rank, hit in enumerate(found.results, 1):
        where = f" | {hit.file_path}" if hit.file_path else ""
        tags = f" | tags: {', '.join(hit.tags)}" if hit.tags else ""
        score = "" if hit.relevance is None else f" | relevance {hit.relevance:.2f}"
        page = _page(hit.page_number, hit.page_start, hit.page_end, hit.page_count)
        lines.append(
            f"{rank}. {hit.title or '(untitled)'} [{hit.doc_type} {hit.doc_id}]"
            f" | {hit.owner} | {hit.modified_at}{where}{page}{tags}{score}"
        )
        if hit.url:
            lines.append(f"   {hit.url}")
        passage = _short(hit.excerpt)
        if hit.context is not None:
            before = _short_tail(hit.context.before_context, CONTEXT_CHARS)
            after = _short(hit.context.after_context, CONTEXT_CHARS)
            passage = f"{before} [{passage}] {after}".strip()
        if passage:
            lines.append(f"   {passage}")
    return "\n".join(lines)


def _page(number: int | None, start: int | None, end: int | None, count: int | None) -> str:
    """The page of the match, and the passage's pages when it spans several."""
    if number is None:
        return ""
    of = f" of {count}" if count else ""
    spans = start is not None and end is not None and end > start
    return f" | page {number}{of}" + (f" (passage on pages {start}-{end})" if spans else "")


def render_facets(counted: FacetsResponse) -> str:
    lines = [f"{counted.total_documents} documents match."]
    for field, values in counted.facets.items():
        listed = ", ".join(f"{value} ({count})" for value, count in values.items())
        lines.append(f"{field}: {listed or '-'}")
    return "\n".join(lines)


def render_document(info: DocumentInfo) -> str:
    lines = [
        f"{info.title or '(untitled)'} [{info.doc_type} {info.doc_id}]: {info.status},"
        f" {info.chunks} chunks",
        f"owner {info.owner}, modified {info.modified_at}",
    ]
    if info.file_path:
        lines.append(f"path {info.file_path}")
    if info.tags:
        lines.append(f"tags {', '.join(info.tags)}")
    if info.category:
        lines.append(f"category {info.category}")
    return "\n".join(lines)


def render_status(report: IndexStatus) -> str:
    return (
        f"{report.documents} documents ({report.visible_documents} visible to you),"
        f" {report.chunks} chunks, {report.pending} pending, {report.failed} failed;"
        f" model {report.embedding_model} ({report.embedding_dimension} dimensions);"
        f" backend {report.backend}, collection {report.collection}"
    )
