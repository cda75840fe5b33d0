"""Untrusted submission text -> SymEngine expressions, and nothing else: the tokenizer and
the names every reader shares (``tokens``), numeric literals (``literals``), the
whitelisted functions (``functions``), the grammar (``parse``) with its checks and error
messages (``parse_checks``) and the split of answer texts into equations and probe
answers (``answers``).  No text ever reaches ``eval``, ``exec``, ``sympify`` or
``parse_expr``.

May import: ``fastscore.support``.
"""
