"""The fusion defaults the service ships are the ones the quality bench chose for this very
ranking: a change to BM25, to the fusions or to the settings they depend on fails here until
`python -m bench.quality.retrieval` has chosen them again (docs/benchmarks.md, "Retrieval
quality"), and the default hybrid may not score less held out on Vaswani than it reached."""

from pathlib import Path
from typing import cast

import pytest

from app import index_settings
from app.search.algorithms import Hybrid
from app.search.fusion import FusionMethod, branch_weights
from app.search.fusion_defaults import (
    DEFAULT_DENSE_WEIGHT,
    code_digest,
    current_fingerprint,
    default_weights_text,
    fingerprint_changes,
    read_defaults,
)
from app.search.models.requests import SearchBody
from app.store.base import Store

# What the default hybrid (rrf, k 60, the contract's default fusion) reached held out on Vaswani
# (run of 2026-12-04): no later change may lower it unnoticed. Issue 35 asked for 0.524, which
# no RRF weight reaches (best 0.519 on every query; DBSF 0.520 and convex 0.524 held out).
REACHED = 0.5142
RERUN = "re-run `python -m bench.quality.retrieval` (docs/benchmarks.md, 'Retrieval quality')"
API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_defaults_were_chosen_for_this_ranking() -> None:
    changed = fingerprint_changes(read_defaults().fingerprint, current_fingerprint())
    assert not changed, f"the ranking changed since the defaults were chosen ({changed}): {RERUN}"


def test_a_bm25_parameter_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = current_fingerprint()
    monkeypatch.setattr(index_settings, "BM25_B", index_settings.BM25_B + 0.1)
    assert fingerprint_changes(recorded, current_fingerprint()) == ["bm25.b"]


def test_the_code_digest_reads_code_not_comments(tmp_path: Path) -> None:
    module = tmp_path / "ranking.py"
    module.write_text('"""Docstring."""\n\nK = 1.2  # saturation\n')
    digest = code_digest(module)
    module.write_text('"""Reworded."""\n\n# A new comment.\nK = 1.2  # term saturation\n')
    assert code_digest(module) == digest
    module.write_text('"""Reworded."""\n\nK = 0.9\n')
    assert code_digest(module) != digest


def test_the_service_takes_the_chosen_defaults() -> None:
    chosen = read_defaults().fusions
    assert set(chosen) == set(FusionMethod)
    assert {method: default.dense_weight for method, default in chosen.items()} == (
        DEFAULT_DENSE_WEIGHT
    )
    for method, default in chosen.items():
        hybrid = Hybrid(cast(Store, None), method, rrf_k=60)  # the weights only: no search
        assert hybrid.weights == branch_weights(method, default.dense_weight)


def test_the_api_documents_the_chosen_defaults() -> None:
    row = next(line for line in API_DOC.read_text().splitlines() if "| `dense_weight`" in line)
    assert default_weights_text() in row, f"docs/api.md: {row}"
    described = SearchBody.model_fields["dense_weight"].description or ""
    assert default_weights_text() in described


def default_hybrid_held_out() -> float:
    default_fusion = SearchBody.model_fields["fusion"].default
    return read_defaults().fusions[default_fusion].held_out_ndcg["vaswani"]


def test_the_default_hybrid_did_not_fall_below_what_it_reached() -> None:
    held_out = default_hybrid_held_out()
    assert held_out >= REACHED, f"default hybrid: Vaswani nDCG@10 held out {held_out} < {REACHED}"
