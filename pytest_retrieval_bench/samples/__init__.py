"""Benchmark sample formats, read into one `Sample` model."""

from pytest_retrieval_bench.samples.load import LoadedSamples, load_samples
from pytest_retrieval_bench.samples.model import Sample

__all__ = ["LoadedSamples", "Sample", "load_samples"]
