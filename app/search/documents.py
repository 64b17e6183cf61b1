"""Reading one document as a user: may they see it (access rule and verify-on-read), and the
text around one of its chunks, rebuilt from the stored chunks (each chunk after the first
repeats the tail of the one before; the overlap is counted once)."""

from collections.abc import Callable
from dataclasses import dataclass

from app.auth import Principal
from app.filters.documents import readable_chunks_of, readable_documents
from app.ingest.chunking import OVERLAP_WORDS
from app.search.verify import DocRef, Verifier
from app.store import fields
from app.store.base import Store
from app.store.fields import doc_key

CHARS_PER_CHUNK = 400  # a low estimate (chunks hold up to 180 words): sizes the first fetch


@dataclass(frozen=True)
class ChunkContext:
    """The fields of `GET /api/v1/chunk-context`: the chunk and the text on either side."""

    chunk_text: str
    before_context: str
    after_context: str
    has_more_before: bool
    has_more_after: bool
    chunk_index: int
    total_chunks: int


class DocumentReader:
    def __init__(
        self,
        store: Store,
        verifier: Verifier | None = None,
        forget_missing: Callable[[list[DocRef]], None] | None = None,
    ) -> None:
        self.store = store
        self.verifier = verifier
        self.forget_missing = forget_missing

    def is_visible(self, principal: Principal, ref: DocRef) -> bool:
        """Indexed, readable under the access rule, and not dropped by verify-on-read."""
        if not self.store.scroll(readable_chunks_of(principal, doc_key(*ref), 0, 0), limit=1):
            return False
        if self.verifier is None:
            return True
        dropped = self.verifier.statuses(principal.user, [ref])
        if dropped.get(ref) == "missing" and self.forget_missing is not None:
            self.forget_missing([ref])
        return ref not in dropped

    def count_visible(self, principal: Principal) -> int:
        return self.store.count(readable_documents(principal))

    def context(
        self, principal: Principal, ref: DocRef, chunk_index: int, chars: int
    ) -> ChunkContext | None:
        """Up to `chars` characters before and after the chunk, cut at word boundaries; None
        if the chunk does not exist or the principal may not read it. Verify-on-read is the
        caller's (a search already verified its hits)."""
        span = 1 + chars // CHARS_PER_CHUNK
        while True:
            first, last = max(0, chunk_index - span), chunk_index + span
            hits = self.store.scroll(
                readable_chunks_of(principal, doc_key(*ref), first, last), limit=last - first + 1
            )
            chunks = {int(h.payload[fields.CHUNK_INDEX]): str(h.payload[fields.TEXT]) for h in hits}
            if chunk_index not in chunks:
                return None
            total = int(hits[0].payload[fields.TOTAL_CHUNKS])
            last = min(last, total - 1)
            if any(i not in chunks for i in range(first, last + 1)):
                return None  # a new version is being written: no consistent text to show
            words, starts = _stitched([chunks[i].split() for i in range(first, last + 1)])
            start = starts[chunk_index - first]
            before = " ".join(words[:start])
            after = " ".join(words[start + len(chunks[chunk_index].split()) :])
            short_before = len(before) < chars and first > 0
            short_after = len(after) < chars and last < total - 1
            if not (short_before or short_after):
                return ChunkContext(
                    chunk_text=chunks[chunk_index],
                    before_context=_tail(before, chars),
                    after_context=_head(after, chars),
                    has_more_before=len(before) > chars or first > 0,
                    has_more_after=len(after) > chars or last < total - 1,
                    chunk_index=chunk_index,
                    total_chunks=total,
                )
            span *= 2


def _overlap(previous: list[str], following: list[str]) -> int:
    """How many words `following` repeats from the end of `previous`: the chunker starts a chunk
    with exactly the last OVERLAP_WORDS words of the one before, or with none of them."""
    size = min(OVERLAP_WORDS, len(previous))
    return size if size and following[:size] == previous[-size:] else 0


def _stitched(chunks: list[list[str]]) -> tuple[list[str], list[int]]:
    """The words of consecutive chunks with each overlap once, and where each chunk starts."""
    words: list[str] = []
    starts: list[int] = []
    previous: list[str] = []
    for chunk in chunks:
        shared = _overlap(previous, chunk)
        starts.append(len(words) - shared)
        words += chunk[shared:]
        previous = chunk
    return words, starts


def _tail(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[len(text) - chars :]
    return cut if text[len(text) - chars - 1] == " " else cut.partition(" ")[2]


def _head(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[:chars]
    return cut if text[chars] == " " else cut.rpartition(" ")[0]
