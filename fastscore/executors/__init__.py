"""Executors that run fastscore.score over a sweep."""
