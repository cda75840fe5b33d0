"""The graph score of two mechanisms: the similarity of their dependency graphs
(``fastscore.structure.graphs``) up to renaming internal quantities.

**Graph score** (``graph_similarity``): one minus the normalised graph edit distance
with unit costs, where inputs, auxiliary inputs, constants and the target are anchors
matched by name and internal quantities are matched by structure (relabelling one
internal node as another costs nothing). For a partial one-to-one map of internal
nodes with ``m`` matched nodes (anchors included) and ``c`` edges preserved,
``GED = |V1| + |V2| - 2m + |E1| + |E2| - 2c``, so

    score = 2 (m + c) / (|V1| + |E1| + |V2| + |E2|),   in [0, 1],

maximised over the maps: 1 exactly when the two graphs are the same up to renaming
internal quantities (any renamed and/or shuffled copy of the mechanism), 0 when
nothing is shared. The best map is found by depth-first branch and bound: candidates
in order of the edges they keep given the nodes already placed, then of how many
colour-refinement rounds they agree on (so a renamed copy is matched at once); the
bound adds each remaining node's best gain over the free candidates and its edges to
nodes not placed yet. The work is counted in units (one per candidate gain, one per
row and column of a bound); the search is exact unless it runs past ``max_steps``
units, when the best map found so far is kept (the first descent is greedy, and
always completed) and ``exact`` is False: small graphs (the benchmark's, up to ten
relations) are matched exactly, large ones approximately in bounded time.
Deterministic: every order is fixed by the graphs.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fastscore.settings import DEFAULT_SETTINGS
from fastscore.structure.graphs import _ROUNDS, INTERNAL, MechanismGraph

__all__ = ["GraphMatch", "graph_similarity", "DEFAULT_STEPS"]

DEFAULT_STEPS = DEFAULT_SETTINGS.structure_steps
"""Work units (candidate gains, bound cells) the graph match may spend before keeping its best map."""


@dataclass(frozen=True)
class GraphMatch:
    """The best map found: ``mapping`` (reference internal -> submitted internal),
    the nodes and edges it keeps, and whether the search was exhaustive."""

    score: float
    mapping: Mapping[str, str]
    common_nodes: int
    common_edges: int
    exact: bool
    steps: int


def graph_similarity(reference: MechanismGraph, submitted: MechanismGraph, *,
                     max_steps: int = DEFAULT_STEPS) -> GraphMatch:
    """Similarity of two dependency graphs up to renaming internal quantities (module doc).
    The same graph (the same nodes, internal ones and edges: a copy of the mechanism,
    however its equations are ordered or written) is matched to itself without a search,
    and so is a renamed copy whose internal nodes colour refinement tells apart (`_renamed`)."""
    mapping = _renamed(reference, submitted)
    if mapping is not None:
        return GraphMatch(score=1.0, mapping=mapping, common_nodes=len(reference.roles),
                          common_edges=len(reference.edges), exact=True, steps=0)
    anchors = {n for n, r in reference.roles.items() if r != INTERNAL} & \
              {n for n, r in submitted.roles.items() if r != INTERNAL}
    total = len(reference.roles) + len(reference.edges) + len(submitted.roles) + len(submitted.edges)
    if not reference.internal or not submitted.internal:  # nothing to map: the edges between anchors
        common_edges = sum(1 for u, v in reference.edges if u in anchors and v in anchors and (u, v) in submitted.edges)
        return GraphMatch(score=2 * (len(anchors) + common_edges) / total, mapping={}, common_nodes=len(anchors),
                          common_edges=common_edges, exact=True, steps=0)
    search = _Search(reference, submitted, max_steps)
    value, mapping = search.run()
    common_nodes = len(anchors) + min(len(search.a), len(search.b))
    common_edges = search.fixed + value
    return GraphMatch(score=2 * (common_nodes + common_edges) / total, mapping=mapping, common_nodes=common_nodes,
                      common_edges=common_edges, exact=not search.stopped, steps=search.steps)


def _renamed(reference: MechanismGraph, submitted: MechanismGraph) -> dict[str, str] | None:
    """The map of ``reference``'s internal nodes onto ``submitted``'s when the two graphs
    are the same up to renaming them and that map is the only one: the same graph (the
    identity), or internal nodes whose refined colours are all distinct and pair up, with
    every edge kept.  Then the search would find that map and score 1; None otherwise."""
    if len(submitted.edges) != len(reference.edges) or len(submitted.roles) != len(reference.roles):
        return None
    if _anchored(submitted) == _anchored(reference):
        return {n: n for n in reference.internal} if submitted.edges == reference.edges else None
    anchors = {n for n, anchor in _anchored(reference).items() if anchor}
    if anchors != {n for n, anchor in _anchored(submitted).items() if anchor}:
        return None
    by_colour = {c: n for n, c in submitted.colours.items()}
    if len(by_colour) != len(submitted.colours) or len({c for c in reference.colours.values()}) != len(by_colour):
        return None
    mapping = {n: by_colour.get(c) for n, c in reference.colours.items()}
    if None in mapping.values():
        return None
    if {(mapping.get(u, u), mapping.get(v, v)) for u, v in reference.edges} != submitted.edges:
        return None
    return dict(sorted(mapping.items()))


def _anchored(graph: MechanismGraph) -> dict[str, bool]:
    """Every node and whether it is an anchor (matched by name): what the score sees of the roles."""
    return {n: r != INTERNAL for n, r in graph.roles.items()}


class _Search:
    """Branch and bound over maps of the reference's internal nodes (``a``, placed in
    ``order``) into the submission's (``b``), maximising the preserved edges that touch
    an internal node. ``gain[k][v]``: edges kept by placing ``order[k]`` on ``v``, given
    the placements so far (updated as they are made and undone); the bound of a search
    node adds, for every node still to place, its best gain over the free ``v`` plus
    its edges to nodes placed after the current one."""

    def __init__(self, reference: MechanismGraph, submitted: MechanismGraph, max_steps: int):
        self.a, self.b = list(reference.internal), list(submitted.internal)
        self.max_steps = max_steps
        a_index = {n: i for i, n in enumerate(self.a)}
        b_index = {n: j for j, n in enumerate(self.b)}
        self.fixed = sum(1 for u, v in reference.edges
                         if u not in a_index and v not in a_index and (u, v) in submitted.edges)
        marks_a = [set() for _ in self.a]
        marks_b = [set() for _ in self.b]
        for marks, index, edges in ((marks_a, a_index, reference.edges), (marks_b, b_index, submitted.edges)):
            for u, v in edges:
                if u in index and v not in index:
                    marks[index[u]].add((v, 1))
                elif v in index and u not in index:
                    marks[index[v]].add((u, 0))
        anchor_gain = [[len(ma & mb) for mb in marks_b] for ma in marks_a]
        self.successors = [[] for _ in self.b]
        self.predecessors = [[] for _ in self.b]
        for u, v in submitted.edges:
            if u in b_index and v in b_index:
                self.successors[b_index[u]].append(b_index[v])
                self.predecessors[b_index[v]].append(b_index[u])
        a_internal = [(a_index[u], a_index[v]) for u, v in reference.edges if u in a_index and v in a_index]
        # no map keeps more edges than either graph has at its internal nodes
        self.limit = min(sum(u in index or v in index for u, v in edges)
                         for index, edges in ((a_index, reference.edges), (b_index, submitted.edges)))
        self.order = self._order(a_internal, anchor_gain)
        position = {u: k for k, u in enumerate(self.order)}
        self.gain = [list(anchor_gain[u]) for u in self.order]
        # later[k]: (later position, True when the edge leaves order[k]); earlier[k]: positions before k
        self.later = [[] for _ in self.order]
        self.earlier = [[] for _ in self.order]
        for u, v in a_internal:
            pu, pv = position[u], position[v]
            if pu < pv:
                self.later[pu].append((pv, True))
                self.earlier[pv].append(pu)
            elif pv < pu:
                self.later[pv].append((pu, False))
                self.earlier[pu].append(pv)
        # static[k]: a bound of order[k:] whatever the placements (best anchor gain + every edge to earlier nodes)
        # inside[k]: edges between nodes of order[k:]
        self.static = [0] * (len(self.order) + 1)
        self.inside = [0] * (len(self.order) + 1)
        for k in range(len(self.order) - 1, -1, -1):
            self.static[k] = self.static[k + 1] + max(self.gain[k], default=0) + len(self.earlier[k])
            self.inside[k] = self.inside[k + 1] + len(self.later[k])
        colours_a, colours_b = reference.colours, submitted.colours
        history_a = np.array([colours_a[self.a[u]] for u in self.order], dtype=np.int64).reshape(-1, _ROUNDS + 1)
        history_b = np.array([colours_b[w] for w in self.b], dtype=np.int64).reshape(-1, _ROUNDS + 1)
        self.alike = (-(history_a[:, None, :] == history_b[None, :, :]).sum(axis=2)).tolist()  # rounds agreed on
        self.steps = 0
        self.stopped = self.optimal = False
        self.best = -1
        self.best_map: list[int | None] = []

    def _order(self, a_internal, anchor_gain) -> list[int]:
        """Nodes most tied to nodes already placed, then to anchors, first."""
        neighbours = [set() for _ in self.a]
        for u, v in a_internal:
            neighbours[u].add(v)
            neighbours[v].add(u)
        anchored = [max(g, default=0) for g in anchor_gain]
        order, placed = [], set()
        while len(order) < len(self.a):
            pick = min((u for u in range(len(self.a)) if u not in placed),
                       key=lambda u: (-len(neighbours[u] & placed), -anchored[u], -len(neighbours[u]), u))
            order.append(pick)
            placed.add(pick)
        return order

    def run(self) -> tuple[int, dict[str, str]]:
        self.assign: list[int | None] = [None] * len(self.order)
        self.used = [False] * len(self.b)
        self.ceiling = min(self._bound(0), self.limit)  # reached: the map found is optimal
        self._visit(0, 0, max(0, len(self.a) - len(self.b)))
        mapping = {self.a[self.order[k]]: self.b[j] for k, j in enumerate(self.best_map) if j is not None}
        return max(self.best, 0), dict(sorted(mapping.items()))

    def _bound(self, k: int) -> int:
        """Most edges the placements of ``order[k:]`` can still keep."""
        free = [v for v, used in enumerate(self.used) if not used]
        if not free:
            return self.inside[k]
        return sum(max([row[v] for v in free]) for row in self.gain[k:]) + self.inside[k]

    def _place(self, k: int, v: int, step: int) -> None:
        """Add (``step`` 1) or remove (-1) the gains that placing ``order[k]`` on ``v`` gives later nodes."""
        for p, leaves in self.later[k]:
            row = self.gain[p]
            for w in (self.successors[v] if leaves else self.predecessors[v]):
                row[w] += step

    def _visit(self, k: int, value: int, skips: int) -> None:
        """Place ``order[k:]`` given the placements before ``k`` (worth ``value``)."""
        if self.optimal or self.stopped:
            return
        if k == len(self.order):
            if value > self.best:
                self.best, self.best_map = value, list(self.assign)
                self.optimal = value >= self.ceiling
            return
        self.steps += len(self.b)  # work units: the candidates' gains, and the bound's rows x columns
        if self.best >= 0:
            if value + self.static[k] <= self.best:
                return
            self.steps += (len(self.order) - k) * len(self.b)
            if value + self._bound(k) <= self.best:
                return
        row, alike = self.gain[k], self.alike[k]
        candidates = sorted((-row[v], alike[v], v) for v in range(len(self.b)) if not self.used[v])
        for negative, _, v in candidates:
            # the cap stops the search once a complete map exists (the first descent is greedy)
            self.stopped = self.steps > self.max_steps and self.best >= 0 and not self.optimal
            if self.stopped or self.optimal:
                return
            self.assign[k] = v
            self.used[v] = True
            self._place(k, v, 1)
            self._visit(k + 1, value - negative, skips)
            self._place(k, v, -1)
            self.used[v] = False
            self.assign[k] = None
        if skips:
            self._visit(k + 1, value, skips - 1)

