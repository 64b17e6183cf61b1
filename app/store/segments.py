"""How big a segment of the embedded index may grow. A search runs each segment's part on a
search thread of its own, so an index in two segments answers on two cores where one segment
answers on one. At 1M chunks over HTTP, after a restart: hybrid p50 7.45-7.64 ms in two segments
of 500k against 10.01-12.94 in one, for 1.3-1.4x the CPU a search (docs/benchmarks.md, "Twelfth
pass"). Below the cap an index stays in one segment, which costs the least CPU a search (users'
100k: 5.8 ms of the engine's against 6.6 in four segments).

Two ways keep the cap: a bulk load builds the graph of what it wrote each time SEGMENT_CHUNKS
chunks are outside it (`app.store.open.build_full_segment`), since the engine indexes a segment
as it is and never splits one; and the engine joins segments (a merge, or a segment it indexes
with the smallest indexed one) only while the result stays under `max_segment_kb`, which it
counts in the dense vectors' bytes. Set to a full segment's, a full segment never takes in
more, while small ones (a rebuild's, a trickle's) fold into each other up to it. The engine's
own default, 256,000 KiB a core, would fold them only up to ~340k chunks on two cores, but let a
merge on eight join two full segments."""

from app.index_settings import DIMENSION

SEGMENT_CHUNKS = 500_000
FLOAT32_BYTES = 4


def max_segment_kb() -> int:
    """The engine's cap on joined segments, in KiB of dense float32 vectors: a full segment's
    (read at each open, so that a test may lower SEGMENT_CHUNKS)."""
    return SEGMENT_CHUNKS * DIMENSION * FLOAT32_BYTES // 1024
