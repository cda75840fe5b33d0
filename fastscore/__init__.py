"""fastscore: bulk scorer for scientific-discovery benchmarks."""
__version__ = "0.1.0"
