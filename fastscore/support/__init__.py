"""Plumbing every floor shares, and nothing about scoring: the registry of memo caches
(``caches``), the garbage-collector pause around bulk work (``collector``), the lazy
built-in entries of registries (``registry``), child processes and run locks that die
with their owner (``lifeline``), and the optional extras' package lists (``extras``).

May import: the standard library only (no other fastscore package).
"""
