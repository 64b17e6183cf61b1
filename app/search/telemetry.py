"""What one search leaves behind: its stage timings and verify outcome in the metrics, and a
log line when it was slow, with the filter's shape (the names of the fields it narrowed by,
never their values or the query)."""

import logging
from dataclasses import fields

from app.search.service import SearchOutcome, SearchQuery
from app.search.verify import Verification
from app.telemetry.metrics import Metrics

log = logging.getLogger("astrolabe.search")


class SearchTelemetry:
    def __init__(self, metrics: Metrics, slow_seconds: float) -> None:
        self._metrics = metrics
        self._slow_ms = slow_seconds * 1000

    def observe(self, query: SearchQuery, outcome: SearchOutcome) -> None:
        algorithm = "browse" if query.browse else query.algorithm.value
        granularity = query.granularity.value
        stages = measured_stages(query, outcome)
        for stage, milliseconds in stages.items():
            self._metrics.search_seconds.labels(algorithm, granularity, stage).observe(
                milliseconds / 1000
            )
        self._metrics.verifications.labels(outcome.verification.value).inc()
        self._metrics.verify_dropped.inc(outcome.dropped_document_count)
        if stages["total"] >= self._slow_ms:
            self._metrics.slow_searches.inc()
            self._log_slow(query, outcome, algorithm, stages)

    def _log_slow(
        self,
        query: SearchQuery,
        outcome: SearchOutcome,
        algorithm: str,
        stages: dict[str, float],
    ) -> None:
        filters = filter_shape(query)
        log.warning(
            "slow search: %.1f ms (%s); %s, %s, filters: %s; %d results",
            stages["total"],
            ", ".join(f"{stage} {ms:.1f}" for stage, ms in stages.items() if stage != "total"),
            algorithm,
            query.granularity.value,
            ", ".join(filters) or "none",
            len(outcome.hits),
            extra={
                "event": "slow_search",
                "duration_ms": stages["total"],
                "stages_ms": stages,
                "algorithm": algorithm,
                "fusion": query.fusion.value,
                "granularity": query.granularity.value,
                "filters": filters,
                "facets": query.include_facets,
                "limit": query.limit,
                "offset": query.offset,
                "results": len(outcome.hits),
                "total_found": outcome.total_found,
                "verification": outcome.verification.value,
            },
        )


def measured_stages(query: SearchQuery, outcome: SearchOutcome) -> dict[str, float]:
    """The stages this search went through, in milliseconds (a browse embeds nothing, facets
    and verify only when asked for and configured)."""
    timing = outcome.timing_ms
    stages = {"embed": timing["embed"]} if not query.browse else {}
    stages["engine"] = timing["engine"]
    if query.include_facets:
        stages["facets"] = timing["facets"]
    if outcome.verification is not Verification.SKIPPED:
        stages["verify"] = timing["verify"]
    stages["total"] = timing["total"]
    return stages


def filter_shape(query: SearchQuery) -> list[str]:
    """The filter fields this search set (their names only), plus a relevance floor."""
    spec = query.spec
    shape = [f.name for f in fields(spec) if getattr(spec, f.name) not in ((), None)]
    if query.min_relevance is not None:
        shape.append("min_relevance")
    if query.score_threshold:
        shape.append("score_threshold")
    return shape
