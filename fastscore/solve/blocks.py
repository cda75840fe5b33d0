"""The block structure of a mechanism's equations, a Dulmage-Mendelsohn style
decomposition: a maximum bipartite matching of equations to unknowns (``match``) and
the strongly connected components of the dependency graph it induces, dependencies
first (``blocks``, Tarjan).  Used by the solver (``fastscore.solve.mechanism``) to solve block
by block, and by ``fastscore.structure.graphs`` for a mechanism's graph.
"""

from __future__ import annotations

__all__ = ["blocks", "listed", "match"]

_MAX_LISTED = 8  # unknown names listed in an error message


def match(equation_unknowns: list[set[str]], unknowns: list[str]) -> dict[int, str]:
    """Maximum bipartite matching equation index -> unknown (augmenting paths)."""
    owner: dict[str, int] = {}

    def augment(i: int, seen: set[str]) -> bool:
        for u in sorted(equation_unknowns[i]):
            if u in seen:
                continue
            seen.add(u)
            if u not in owner or augment(owner[u], seen):
                owner[u] = i
                return True
        return False

    for i in range(len(equation_unknowns)):
        augment(i, set())
    return {i: u for u, i in owner.items()}


def blocks(equation_unknowns: list[set[str]], matching: dict[int, str]) -> list[list[int]]:
    """Strongly connected components of the equation dependency graph, dependencies first."""
    solver_of = {u: i for i, u in matching.items()}
    edges = {i: [solver_of[u] for u in equation_unknowns[i] if u != matching[i]] for i in matching}
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    out: list[list[int]] = []

    def visit(v: int) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def listed(names) -> str:
    """The sorted ``names`` for an error message, the first ``_MAX_LISTED`` of them."""
    names = sorted(names)
    more = ", ..." if len(names) > _MAX_LISTED else ""
    return ", ".join(names[:_MAX_LISTED]) + more
