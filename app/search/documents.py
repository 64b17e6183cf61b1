"""Reading one document as a user: may they see it (access rule and verify-on-read), how many
they can see."""

from collections.abc import Callable
from dataclasses import dataclass

from app.auth import Principal
from app.filters.documents import readable_chunks_of, readable_documents
from app.search.verify import DocRef, VerifySource
from app.store.base import Store
from app.store.fields import doc_key


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
    page_number: int | None


class DocumentReader:
    def __init__(
        self,
        store: Store,
        verifier: VerifySource | None = None,
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
        dropped = self.verifier.statuses(principal.user, [ref], self.verifier.budget())
        if dropped.get(ref) == "missing" and self.forget_missing is not None:
            self.forget_missing([ref])
        return ref not in dropped

    def count_visible(self, principal: Principal) -> int:
        return self.store.count(readable_documents(principal))
