"""The int8 copy of the exported graph that searches embed their texts with. Needs ONNX Runtime
and onnx (the `export` extra), not torch."""

import os
import tempfile
from pathlib import Path

from app.embeddings.model_files import publish, query_graph_beside


def quantize_for_queries(graph: Path) -> Path:
    """Writes the graph's int8 copy beside it (weights int8, activations quantized at each run):
    a query embeds in about half the time, and Vaswani's nDCG@10 against documents embedded by
    the float graph stayed within 0.005 (docs/benchmarks.md)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = query_graph_beside(graph)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        quantize_dynamic(graph, temporary, weight_type=QuantType.QInt8)
        publish(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return target
