"""Structure of a mechanism: its dependency graph.

Pure functions of parsed equations (SymEngine ``(lhs, rhs)`` pairs from
``fastscore.text.parse.parse_equation``), the known names (inputs, auxiliary inputs,
constants) and the target.  The similarity of two graphs is
``fastscore.structure.graph_score``'s, that of the equations' formulas
``fastscore.structure.ast_score``'s.

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

``fixed_numbers`` substitutes the names one equation fixes to a number before the
structure is compared.  ``fingerprint`` is a key equal for graphs that are the same up to
renaming internal quantities, from the colour refinement of their nodes (``_colours``,
also used by the graph score to order its search).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import symengine as se

from fastscore.solve.blocks import blocks as _blocks
from fastscore.solve.blocks import match as _match
from fastscore.solve.closed_forms import names_of
from fastscore.support.caches import memoized

__all__ = ["Block", "MechanismGraph", "mechanism_graph", "fixed_numbers", "fingerprint"]

EXPLICIT, IMPLICIT, UNDER, OVER = "explicit", "implicit", "under-determined", "over-determined"
INTERNAL, TARGET = "internal", "target"
_ROUNDS = 4  # colour refinement rounds that order the search's candidates


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

