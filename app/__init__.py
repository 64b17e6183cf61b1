"""Astrolabe Search: hybrid (dense + BM25) search over a Qdrant collection of document chunks."""

__version__ = "0.1.0"
