"""fastscore: bulk scorer for scientific-discovery benchmarks.

``fastscore.score_sweep(problems, sweep, out, ...)`` runs the main job from Python
(see ``fastscore.run``); heavy modules load on first use, so the CLI starts fast."""
__version__ = "0.1.0"
__all__ = ["score_sweep"]


def __getattr__(name: str):
    if name == "score_sweep":
        from fastscore.run import score_sweep
        return score_sweep
    raise AttributeError(f"module 'fastscore' has no attribute {name!r}")
