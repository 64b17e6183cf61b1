"""The dense weight each fusion takes by default, read once from `fusion_defaults.json` beside
this module. The quality bench writes that file (`python -m bench.quality.retrieval`): per
fusion, the weight that cross-validation chose on both of its collections, the held-out nDCG@10
it reached on each, and the fingerprint of what the ranking depended on when it was measured.
`tests/search/test_fusion_defaults.py` fails once the fingerprint no longer matches this code
(a BM25 or fusion change), so such a change cannot ship without the bench run that re-chooses
the weights; docs/benchmarks.md, "Retrieval quality", says how."""

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import index_settings
from app.config import Settings
from app.search.fusion import FusionMethod

DEFAULTS_FILE = Path(__file__).with_name("fusion_defaults.json")
APP = Path(__file__).resolve().parents[1]
# The modules whose code decides the hybrid ranking beside the settings: BM25's encoding (query
# and chunks), the mean chunk length it is fitted with, and the fusions.
RANKING_MODULES = ("embeddings/sparse.py", "ingest/sparse_fit.py", "search/fusion.py")


@dataclass(frozen=True)
class FusionDefault:
    dense_weight: float
    held_out_ndcg: dict[str, float]  # per collection: the mean of the folds' held-out scores
    ndcg: dict[str, float]  # per collection: every query at `dense_weight`


@dataclass(frozen=True)
class FusionDefaults:
    fusions: dict[FusionMethod, FusionDefault]
    fingerprint: dict[str, Any]
    chosen_by: str
    date: str

    @classmethod
    def of(cls, record: dict[str, Any]) -> "FusionDefaults":
        fusions = {
            FusionMethod(name): FusionDefault(
                float(entry["dense_weight"]),
                dict(entry["held_out_ndcg@10"]),
                dict(entry["ndcg@10"]),
            )
            for name, entry in record["fusions"].items()
        }
        return cls(fusions, record["fingerprint"], record["chosen_by"], record["date"])


def read_defaults(path: Path = DEFAULTS_FILE) -> FusionDefaults:
    return FusionDefaults.of(json.loads(path.read_text()))


def code_digest(module: Path) -> str:
    """A module's code without its comments, docstrings and layout: an edit that can change
    what it computes changes the digest, a reworded comment does not."""
    tree = ast.parse(module.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return hashlib.sha256(ast.unparse(tree).encode()).hexdigest()[:16]


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def current_fingerprint() -> dict[str, Any]:
    """What the hybrid ranking depends on in this code: the stored data's settings, RRF's k by
    default, and the code of RANKING_MODULES."""
    return {
        "model": index_settings.MODEL_NAME,
        "dimension": index_settings.DIMENSION,
        "chunk_words": index_settings.CHUNK_WORDS,
        "bm25": index_settings.bm25_parameters(),
        "rrf_k": Settings.model_fields["rrf_k"].default,
        "code": {name: code_digest(APP / name) for name in RANKING_MODULES},
    }


def fingerprint_changes(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The entries of two fingerprints that differ (`code.<module>` for a module's code)."""
    flat_recorded, flat_current = _flat(recorded), _flat(current)
    names = sorted(flat_recorded.keys() | flat_current.keys())
    return [name for name in names if flat_recorded.get(name) != flat_current.get(name)]


def _flat(fingerprint: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in fingerprint.items():
        if isinstance(value, dict):
            flat |= _flat(value, f"{prefix}{name}.")
        else:
            flat[f"{prefix}{name}"] = value
    return flat


DEFAULT_DENSE_WEIGHT = {
    method: chosen.dense_weight for method, chosen in read_defaults().fusions.items()
}


def default_weights_text() -> str:
    """The defaults as the API documents them: `0.4 for rrf, ...`."""
    return ", ".join(f"{weight:g} for {method}" for method, weight in DEFAULT_DENSE_WEIGHT.items())
