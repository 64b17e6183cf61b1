"""The benchmark corpus: Vaswani's real abstracts, grown to 100k / 300k chunks with derived
chunks, each point carrying metadata drawn from a fixed seed.

A derived chunk is a new document made of the sentences of two real abstracts interleaved; its
dense vector is the normalised sum of theirs (no model run), its BM25 vector comes from the mixed
text. Metadata: 10 owners; the benchmark user (`u0`, group `g0`) can read ~40 % of the documents
(owner 10 %, or `group:g0` in the ACL); 1,000 folders (50 teams x 20 projects), 20 tags (three a
document), 20 categories, dates spread over six years. Every document is also readable by
`group:everyone`, the group of the quality user, who must see the whole collection."""

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.ingest.chunking import Chunk as Span
from app.ingest.chunking import chunk_spans
from app.ingest.documents import Document
from bench.harness.results import REPO

DATASET = REPO.parent / "shared" / "datasets" / "vaswani_npl"
SEED = 20261130
DERIVATION = 2  # bumped whenever the functions below make other points: tiers are remade
CHUNK_WORDS = 180  # the Indexer's default
BENCH_USER = "u0"
BENCH_GROUP = "g0"
QUALITY_GROUP = "everyone"
TAGS = [f"tag{i:02d}" for i in range(20)]
CATEGORIES = [f"cat{i:02d}" for i in range(20)]
FIRST_DAY = 1_577_836_800  # 2020-01-01
SPAN = 6 * 365 * 86_400
YEAR = 365 * 86_400

_DOC = re.compile(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", re.S)
_QUERY = re.compile(r"<num>(.*?)</num><title>(.*?)</title>", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def load_vaswani(
    dataset: Path = DATASET,
) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    """Documents, queries and relevant documents per query (TREC files)."""
    docs = {
        m[0].strip(): " ".join(m[1].split())
        for m in _DOC.findall((dataset / "doc-text.trec").read_text())
    }
    queries = {
        m[0].strip(): " ".join(m[1].split()).lower()
        for m in _QUERY.findall((dataset / "query-text.trec").read_text())
    }
    qrels: dict[str, set[str]] = {}
    for line in (dataset / "qrels").read_text().splitlines():
        qid, _, doc_id, rel = line.split()
        if int(rel) > 0:
            qrels.setdefault(qid, set()).add(doc_id)
    return docs, queries, qrels


def judged(queries: dict[str, str], qrels: dict[str, set[str]]) -> dict[str, str]:
    """The queries with relevance judgements, in the order of their ids."""
    return {q: queries[q] for q in sorted(queries) if q in qrels}


def judged_queries(dataset: Path = DATASET, count: int | None = None) -> list[str]:
    """The texts of the first `count` judged queries (all of them: None)."""
    _, queries, qrels = load_vaswani(dataset)
    return list(judged(queries, qrels).values())[:count]


def long_documents(
    docs: dict[str, str], qrels: dict[str, set[str]], size: int = 6
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """A collection of longer documents (~250 words, several chunks): `size` abstracts drawn
    together by a fixed seed make one; it is relevant to a query when one of them is."""
    ids = sorted(docs)
    random.Random(SEED).shuffle(ids)
    groups = [ids[i : i + size] for i in range(0, len(ids), size)]
    member = {doc_id: f"long{n:05d}" for n, group in enumerate(groups) for doc_id in group}
    long_docs = {f"long{n:05d}": " ".join(docs[d] for d in group) for n, group in enumerate(groups)}
    return long_docs, {q: {member[d] for d in rel if d in member} for q, rel in qrels.items()}


def embed_text(doc: Document, chunk: str) -> str:
    """What the Indexer embeds for a chunk (title line, then the chunk)."""
    return f"{doc.title}\n{chunk}"


@dataclass(frozen=True)
class Chunk:
    doc: Document
    index: int
    total: int
    span: Span  # the chunk's text and its offsets in the document

    @property
    def text(self) -> str:
        return self.span.text


def _metadata(rng: random.Random, doc_id: str, content: str) -> Document:
    team, project = rng.randrange(50), rng.randrange(20)
    owner = "u0" if rng.random() < 0.10 else f"u{rng.randrange(1, 10)}"
    acl = [f"group:{QUALITY_GROUP}"]
    if rng.random() < 1 / 3:
        acl.append(f"group:{BENCH_GROUP}")
    return Document(
        doc_type="file",
        doc_id=doc_id,
        title="",
        content=content,
        owner=owner,
        modified_at=FIRST_DAY + rng.randrange(SPAN),
        file_path=f"/team{team:02d}/project{project:02d}/{doc_id}.txt",
        tags=tuple(sorted(rng.sample(TAGS, 3))),
        category=rng.choice(CATEGORIES),
        mime_type="text/plain",
        acl=tuple(acl),
    )


def real_chunks(docs: dict[str, str], limit: int | None = None) -> list[Chunk]:
    rng = random.Random(SEED)
    chunks: list[Chunk] = []
    for doc_id, text in list(docs.items())[:limit]:
        doc = _metadata(rng, doc_id, text)
        pieces = chunk_spans(text, max_words=CHUNK_WORDS)
        chunks.extend(Chunk(doc, i, len(pieces), piece) for i, piece in enumerate(pieces))
    return chunks


def derived_chunks(
    real: list[Chunk], count: int, seed: int = SEED + 1, prefix: str = "mix"
) -> Iterator[tuple[Chunk, int, int]]:
    """`count` mixed chunks, each with the positions (in `real`) of its two parents. Each is a
    document of one chunk as the service chunks it: a mix longer than CHUNK_WORDS keeps only
    its first chunk (sent over HTTP, the whole mix would be split)."""
    rng = random.Random(seed)
    for n in range(count):
        a, b = rng.randrange(len(real)), rng.randrange(len(real))
        first, second = _SENTENCE.split(real[a].text), _SENTENCE.split(real[b].text)
        mixed = [s for pair in zip(first, second, strict=False) for s in pair]
        longer = first if len(first) > len(second) else second
        mixed += longer[min(len(first), len(second)) :]
        text = " ".join(mixed)
        if len(text.split()) > CHUNK_WORDS:
            text = chunk_spans(text, max_words=CHUNK_WORDS)[0].text
        doc = _metadata(rng, f"{prefix}{n:06d}", text)
        yield Chunk(doc, 0, 1, Span(text, 0, len(text))), a, b


def mix_vectors(vectors: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mixed = vectors[a] + vectors[b]
    norms = np.linalg.norm(mixed, axis=1, keepdims=True)
    normalised: np.ndarray = (mixed / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised
