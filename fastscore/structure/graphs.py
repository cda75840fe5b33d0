"""Structure of a mechanism and its similarity to another one (issue 14).

Pure functions of parsed equations (SymEngine ``(lhs, rhs)`` pairs from
``fastscore.text.parse.parse_equation``), the known names (inputs, auxiliary inputs,
constants) and the target.

**Dependency graph** (``mechanism_graph``): one node per quantity (every name in the
equations, and the target); an equation *determines* unknowns and *uses* the other
names in it. Which unknowns an equation determines follows from the
Dulmage-Mendelsohn decomposition of the equation/unknown incidence (a maximum
bipartite matching, ``fastscore.solve.blocks.match``, and its strongly connected
components, ``fastscore.solve.blocks.blocks``), which does not depend on the matching
chosen, so not on the names: every block of the square part (one equation for one
unknown: an *explicit* step; several coupled ones: an *implicit* block), the whole
under-determined part and the whole over-determined part (relations among knowns
included) are blocks. For every equation of a block, every unknown of that block in
it, and every other name ``w`` in it, there is an edge ``w -> unknown``: an explicit
step has edges from the names it uses to the quantity it defines; inside a coupled
block the members of one equation point at each other both ways.

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

**AST score** (``ast_similarity``): each equation is a bag of subtree shapes: every
subtree of both sides with variable names and numeric values erased (a symbol is
``var``; a subtree free of symbols, ``pi`` and numeric literals included, is
``num``; the numeric factors of a product and terms of a sum merge into one ``num``;
the arguments of ``+`` and ``*`` are unordered, the two sides of ``=`` too). Two
equations score the Dice coefficient of their bags, ``2 |A ∩ B| / (|A| + |B|)``
(multisets). Equations are paired one to one by maximum total similarity (the
Hungarian method; ties go to pairs whose names agree under the graph map), and the
overall score is the sum over pairs divided by the larger number of equations, so a
missing or an extra equation costs its share.
"""
from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import symengine as se
from scipy.optimize import linear_sum_assignment

from fastscore.support.caches import memoized
from fastscore.settings import DEFAULT_SETTINGS
from fastscore.solve.blocks import blocks as _blocks, match as _match
from fastscore.solve.closed_forms import names_of

__all__ = ["Block", "MechanismGraph", "GraphMatch", "AstMatch", "mechanism_graph", "fixed_numbers",
           "graph_similarity", "fingerprint", "equation_shapes", "ast_similarity", "AstReference", "DEFAULT_STEPS"]

EXPLICIT, IMPLICIT, UNDER, OVER = "explicit", "implicit", "under-determined", "over-determined"
INTERNAL, TARGET = "internal", "target"
DEFAULT_STEPS = DEFAULT_SETTINGS.structure_steps
"""Work units (candidate gains, bound cells) the graph match may spend before keeping its best map."""
_ROUNDS = 4  # colour refinement rounds that order the search's candidates
_TIE = 1e-9  # weight of the name-agreement tie break in the pairing of equations


# ----------------------------------------------------------------- the graph


@dataclass(frozen=True)
class Block:
    """Equations (indices) that together determine ``unknowns``."""

    kind: str  # explicit | implicit | under-determined | over-determined
    equations: tuple[int, ...]
    unknowns: tuple[str, ...]


@dataclass(frozen=True)
class MechanismGraph:
    """A mechanism's dependency graph: ``roles`` maps every node (quantity) to
    ``input``/``auxiliary``/``constant`` (or ``known``), ``internal`` or ``target``;
    ``edges`` are (used, determined) pairs."""

    target: str
    roles: Mapping[str, str]
    edges: frozenset[tuple[str, str]]
    blocks: tuple[Block, ...]
    equations: tuple[tuple[se.Basic, se.Basic], ...]

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(sorted(self.roles))

    @property
    def internal(self) -> tuple[str, ...]:
        """The internal quantities (sorted)."""
        return tuple(n for n in self.nodes if self.roles[n] == INTERNAL)

    @cached_property
    def colours(self) -> dict[str, tuple[int, ...]]:
        """``_colours`` of the graph (computed once: a reference graph is matched many times)."""
        return _colours(self)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "colours"}  # process-local hashes: not pickled


def mechanism_graph(equations: Sequence[tuple[se.Basic, se.Basic]], knowns: Collection[str], target: str,
                    roles: Mapping[str, str] | None = None) -> MechanismGraph:
    """The dependency graph of ``equations`` (see module doc); ``roles`` names the
    role of each known (default ``known``)."""
    known = set(knowns)
    names = [names_of(lhs) | names_of(rhs) for lhs, rhs in equations]
    unknowns_of = [n - known for n in names]
    unknowns = sorted({target}.union(*unknowns_of) - known)
    blocks = _decompose(tuple(map(frozenset, unknowns_of)), tuple(unknowns))
    edges = set()
    for block in blocks:
        members = set(block.unknowns)
        for i in block.equations:
            for u in unknowns_of[i] & members:
                edges.update((w, u) for w in names[i] if w != u)
    role = {}
    for name in sorted(set().union({target}, *names)):
        role[name] = TARGET if name == target else INTERNAL if name not in known else \
            (roles or {}).get(name, "known")
    return MechanismGraph(target=target, roles=role, edges=frozenset(edges), blocks=tuple(blocks),
                          equations=tuple(equations))


def fixed_numbers(equations: Sequence[tuple[se.Basic, se.Basic]], knowns: Collection[str],
                  target: str) -> list[tuple[se.Basic, se.Basic]]:
    """``equations`` with every name that one equation fixes to a number (``k = 1.4``,
    ``2.5e-3 = mu``, or ``mu = k*f`` once ``k`` and ``f`` are) substituted into the others
    and that equation left out, until none is left: the structure scores compare
    mechanisms so.  A coefficient is a number, not a quantity of the structure, however
    it is written: a task's own undeclared coefficients are substituted already, and a
    copy of its mechanism that keeps the ``k = 1.4`` lines (or a renamed copy, or one
    with the numbers written in) has the same graph and ASTs.  A name fixed by two such
    equations, a known and the target are left as they are."""
    known = set(knowns)
    equations = list(equations)
    while True:
        definitions: dict[se.Basic, list[tuple[int, se.Basic]]] = {}
        for i, (lhs, rhs) in enumerate(equations):
            for side, other in ((lhs, rhs), (rhs, lhs)):
                if side.is_Symbol and side.name not in known and side.name != target and not names_of(other):
                    definitions.setdefault(side, []).append((i, other))
        fixed = {name: found[0] for name, found in definitions.items() if len(found) == 1}
        if not fixed:
            return equations
        dropped = {i for i, _ in fixed.values()}
        values = se.DictBasic({name: value for name, (_, value) in fixed.items()})  # converted once, not per call
        names = {name.name for name in fixed}
        equations = [(lhs.xreplace(values), rhs.xreplace(values)) if names & (names_of(lhs) | names_of(rhs))
                     else (lhs, rhs) for i, (lhs, rhs) in enumerate(equations) if i not in dropped]


def _alternating_reach(starts, neighbours, partner) -> tuple[set, set]:
    """The nodes reached from ``starts`` along alternating paths (a node, each of its
    ``neighbours``, each neighbour's matched ``partner``), and the neighbours crossed."""
    reached, crossed = set(), set()
    stack = list(starts)
    while stack:
        node = stack.pop()
        if node in reached:
            continue
        reached.add(node)
        for other in neighbours[node]:
            if other not in crossed:
                crossed.add(other)
                stack.append(partner[other])
    return reached, crossed


@memoized(1 << 10)
def _decompose(unknowns_of: tuple[frozenset[str], ...], unknowns: tuple[str, ...]) -> tuple[Block, ...]:
    """Dulmage-Mendelsohn blocks: over-determined part, square blocks in dependency
    order, under-determined part (empty parts left out); memoised (a task's mechanisms
    share their structure: a perturbed one has its original's)."""
    matching = _match([set(u) for u in unknowns_of], unknowns)
    owner = {u: i for i, u in matching.items()}
    equations_of: dict[str, list[int]] = {u: [] for u in unknowns}
    for i, us in enumerate(unknowns_of):
        for u in us:
            equations_of[u].append(i)
    # under-determined: reachable from unmatched unknowns (unknown -> its equations -> their matched unknowns)
    under_u, under_e = _alternating_reach([u for u in unknowns if u not in owner], equations_of, matching)
    # over-determined: reachable from unmatched equations (equation -> its unknowns -> their equations)
    over_e, over_u = _alternating_reach([i for i in range(len(unknowns_of)) if i not in matching], unknowns_of, owner)
    blocks = [Block(OVER, tuple(sorted(over_e)), tuple(sorted(over_u)))] if over_e else []
    square = {i: u for i, u in matching.items() if i not in under_e and i not in over_e}
    restricted = [set(us) & set(square.values()) for us in unknowns_of]
    for component in _blocks(restricted, square):
        blocks.append(Block(EXPLICIT if len(component) == 1 else IMPLICIT, tuple(component),
                            tuple(sorted(square[i] for i in component))))
    if under_u:
        blocks.append(Block(UNDER, tuple(sorted(under_e)), tuple(sorted(under_u))))
    return tuple(blocks)


# ------------------------------------------------------------ graph matching


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


def _colours(graph: MechanismGraph, rounds: int = _ROUNDS, *,
             include_anchors: bool = False) -> dict[str, tuple[int, ...]]:
    """Colour refinement (Weisfeiler-Leman) of every internal node: its colours after
    0..``rounds`` rounds, anchors coloured by name. Nodes of two graphs that correspond
    under an isomorphism get the same colours; the search tries them first."""
    predecessors: dict[str, list[str]] = {n: [] for n in graph.roles}
    successors: dict[str, list[str]] = {n: [] for n in graph.roles}
    for u, v in graph.edges:
        successors[u].append(v)
        predecessors[v].append(u)
    colour = {n: hash(("internal",)) if r == INTERNAL else hash(("anchor", n)) for n, r in graph.roles.items()}
    history = {n: [c] for n, c in colour.items()}
    for _ in range(rounds):
        colour = {n: hash((colour[n], tuple(sorted(colour[p] for p in predecessors[n])),
                           tuple(sorted(colour[q] for q in successors[n])))) for n in graph.roles}
        for n, c in colour.items():
            history[n].append(c)
    return {n: tuple(h) for n, h in history.items() if include_anchors or graph.roles[n] == INTERNAL}


def fingerprint(graph: MechanismGraph) -> tuple:
    """A key equal for graphs that are the same up to renaming internal quantities (and,
    rarely, for some that colour refinement cannot tell apart): the multiset of every
    node's refined colour (valid within one process) and the edge count."""
    colours = _colours(graph, include_anchors=True)
    return tuple(sorted(c[-1] for c in colours.values())), len(graph.edges)


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


# --------------------------------------------------------------- formula ASTs


_VAR = zlib.crc32(b"var")
_NUM = zlib.crc32(b"num")
_EQUALS = zlib.crc32(b"=")
_COMMUTATIVE = ("Add", "Mul")


@memoized(1 << 12)
def _op(name: str) -> int:
    return zlib.crc32(name.encode())


def _shape(expr: se.Basic, bag: Counter) -> int:
    """The shape code of ``expr``; every subtree's shape is counted in ``bag``.  A subtree
    without free symbols is one number, counted once: its operands are all numbers
    (found bottom-up, each counted once, so their counts are taken back)."""
    args = expr.args
    if not args:
        code = _VAR if expr.is_Symbol else _NUM
    else:
        children = [_shape(arg, bag) for arg in args]
        if all(c == _NUM for c in children):
            bag[_NUM] += 1 - len(children)
            return _NUM
        kind = type(expr).__name__
        if kind in _COMMUTATIVE:
            numeric = [c for c in children if c == _NUM]
            children = sorted(c for c in children if c != _NUM)
            if numeric:  # the numeric factors (terms) merge into one number
                bag[_NUM] -= len(numeric) - 1
                children.insert(0, _NUM)
        code = hash((_op(kind), *children))
    bag[code] += 1
    return code


@memoized(1 << 12)
def equation_shapes(lhs: se.Basic, rhs: se.Basic) -> Counter:
    """The bag (multiset) of subtree shapes of ``lhs = rhs`` (module doc); memoised (a
    task's submissions share most of their equations), so not to be changed."""
    bag: Counter = Counter()
    sides = sorted((_shape(lhs, bag), _shape(rhs, bag)))
    bag[hash((_EQUALS, *sides))] += 1
    return bag


def _overlap(common: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``common / total`` where ``total`` is positive, else 1."""
    return np.where(total > 0, common / np.maximum(total, 1), 1.0)


@dataclass(frozen=True)
class AstMatch:
    """Overall AST score and the pairs (reference index, submitted index, score)."""

    score: float
    pairs: tuple[tuple[int, int, float], ...]


class AstReference:
    """The reference side of `ast_similarity`, prepared once (a reference is compared with
    every submission): its bags as a count matrix over their shapes.  A submitted bag is
    read once into that matrix's columns (shapes the reference lacks only count in its
    size); bags are the memoised objects of `equation_shapes`, so a batch's mechanisms,
    which share most of their equations, share their rows."""

    def __init__(self, bags: Sequence[Counter], names: Sequence[Collection[str]] = ()):
        self.bags, self.names = tuple(bags), tuple(names)
        self._column: dict = {}
        for bag in self.bags:
            for key in bag:
                self._column.setdefault(key, len(self._column))
        self._matrix, self._totals = self._read(self.bags)
        self._rows: dict[int, tuple[Counter, np.ndarray, int]] = {}  # id(bag) -> (bag, row, size)

    def _read(self, bags: Sequence[Counter]) -> tuple[np.ndarray, np.ndarray]:
        column = self._column
        matrix = np.zeros((len(bags), len(column)), dtype=np.int64)
        totals = np.zeros(len(bags), dtype=np.int64)
        for i, bag in enumerate(bags):
            for key, count in bag.items():
                j = column.get(key)
                if j is not None:
                    matrix[i, j] = count
                totals[i] += count
        return matrix, totals

    def _submitted(self, bags: Sequence[Counter]) -> tuple[np.ndarray, np.ndarray]:
        rows, sizes = [], []
        for bag in bags:
            known = self._rows.get(id(bag))
            if known is None or known[0] is not bag:
                matrix, totals = self._read([bag])
                if len(self._rows) >= _MAX_ROWS:
                    self._rows.clear()
                known = self._rows[id(bag)] = (bag, matrix[0], int(totals[0]))  # the bag kept: its id stays its own
            rows.append(known[1])
            sizes.append(known[2])
        return np.array(rows).reshape(len(bags), len(self._column)), np.array(sizes, dtype=np.int64)

    def similarity(self, submitted: Sequence[Counter], submitted_names: Sequence[Collection[str]] = (), *,
                   mapping: Mapping[str, str] | None = None) -> AstMatch:
        """`ast_similarity` of the reference with ``submitted``."""
        if not self.bags or not submitted:
            return AstMatch(1.0 if len(self.bags) == len(submitted) else 0.0, ())
        a, (b, sizes) = self._matrix, self._submitted(submitted)
        scores = _overlap(2 * np.maximum(np.minimum(a[:, None, :], b[None, :, :]), 0).sum(axis=2),
                          np.add.outer(self._totals, sizes))  # Dice coefficients of the bags (multisets)
        weights = scores
        if self.names and submitted_names:
            mapping = mapping or {}
            ours = [frozenset(mapping.get(n, n) for n in names) for names in self.names]
            theirs = [frozenset(names) for names in submitted_names]
            common = np.array([[len(x & y) for y in theirs] for x in ours], dtype=np.int64)
            union = np.add.outer([len(x) for x in ours], [len(y) for y in theirs]) - common
            weights = scores + _TIE * _overlap(common, union)  # Jaccard similarity of the names
        rows, columns = linear_sum_assignment(weights, maximize=True)
        pairs = tuple((int(i), int(j), float(scores[i, j])) for i, j in zip(rows, columns))
        total = sum(s for _, _, s in pairs)
        return AstMatch(min(1.0, total / max(len(self.bags), len(submitted))), pairs)


_MAX_ROWS = 4096
"""Submitted bags an `AstReference` keeps read."""


def ast_similarity(reference: Sequence[Counter], submitted: Sequence[Counter], *,
                   reference_names: Sequence[Collection[str]] = (), submitted_names: Sequence[Collection[str]] = (),
                   mapping: Mapping[str, str] | None = None) -> AstMatch:
    """Pair the equations (bags from ``equation_shapes``) by maximum total similarity
    and score the pairing (module doc). With the names of each equation's quantities
    and a graph ``mapping`` (reference internal -> submitted), ties go to pairs whose
    names agree under the map.  A reference compared many times is prepared once:
    `AstReference`."""
    return AstReference(reference, reference_names).similarity(submitted, submitted_names, mapping=mapping)
