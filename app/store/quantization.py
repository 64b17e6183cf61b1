"""int8 scalar quantization of the dense vectors, on both engines. The quantized copy (a quarter
of the float32 vectors) is kept in RAM and searched first; the best OVERSAMPLING x limit
candidates are then rescored on the original vectors, so scores stay exact cosines.

Measured at 100k chunks on Qdrant Edge (docs/benchmarks.md, "Scalar quantization"): the graph
built 2.4-3.3x faster, a graph search 3.7x faster, recall@10 against exact search 0.996-0.998
with 2x oversampling, as float32 (0.98 without). A search scored exactly (a narrow filter) reads
the originals: quantization neither helps nor harms it.

1.5x, not 2x: when the service asked 100 candidates a leg, the oversampling set the graph's beam
(150 against 200), which costs more than in proportion under the access rule. At 1M chunks,
the dense leg under the access rule 5.1 against 8.5 ms (recall@10 0.995 against 1.0,
recall@50 0.985 against 0.994, 40 queries against an exact search); at 100k (users' corpus)
1.22 against 1.71 ms, recall@10 0.995 both; Vaswani nDCG@10 of the default 0.5191 against
0.519 (docs/benchmarks.md, "Fifth pass").

BEAM: the engine searches the graph with a beam of max(BEAM, limit x OVERSAMPLING). Since the
service asks 50 candidates a leg (75 with the oversampling), the beam is set: at 1M chunks under
the access rule, 40 queries against an exact search, recall@10 0.995 at 128 and at 150 (the
beam 100 candidates gave), 0.985 at the engine's default of 100; the leg 3.9 ms at 128 against
4.5 at 150 and 3.2 at 100 (docs/benchmarks.md, "Eighth pass").

Not an index setting (`app.index_settings`): it changes no stored vector, only how the engine
searches them, so an index written before is served as it is, and a generation picks it up when
a rebuild or an offline optimize re-indexes its segments."""

from qdrant_client.http import models

QUANTILE = 0.99  # the int8 range spans the values' central 99 %; the extremes are clipped
OVERSAMPLING = 1.5
BEAM = 128  # hnsw_ef: the graph's beam at least (the engine widens it to limit x OVERSAMPLING)


def rescored() -> models.SearchParams:
    """The parameters of a dense search: quantized candidates, rescored on the originals."""
    return models.SearchParams(
        hnsw_ef=BEAM,
        quantization=models.QuantizationSearchParams(
            ignore=False, rescore=True, oversampling=OVERSAMPLING
        ),
    )
