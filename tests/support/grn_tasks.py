"""GRN task texts shared by the GRN mechanism and EvoSCM tests."""
from __future__ import annotations

IFFL = """benchmark: grn
name: iffl
motif: incoherent_ffl
nodes: [X, Y, Z]
edges: ["X -> Y", "X -> Z", "Y -| Z"]
mechanism: ["Y = 2*X/(1+X)", "Z = X - 0.5*Y"]
inputs: {X: [0.1, 5.0]}
"""
"""An incoherent feed-forward loop with a reference mechanism (root X over [0.1, 5])."""
