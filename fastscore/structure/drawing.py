"""Mechanism graphs drawn (``fastscore graph``): DOT text, SVG and PNG.

A ``fastscore.structure.graphs.MechanismGraph`` is drawn with nodes coloured by role
(input, auxiliary input, constant, internal quantity, target), explicit steps as solid
edges and implicit (coupled) blocks as dashed boxes with dashed edges among their
members (an under- or over-determined part is a red dashed box), and, for a
submission, the quantities equal by value to a reference quantity outlined in orange
and labelled with the reference name.

DOT is written by ``to_dot`` (no dependency). SVG and PNG come from Graphviz's
``dot`` when it is on PATH (``engine="auto"``), else from a layered layout computed
here (longest-path layers over the blocks, crossings reduced by barycentre sweeps)
drawn with matplotlib, so a plain ``pip install`` can draw.
"""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from fastscore.structure.graphs import EXPLICIT, IMPLICIT, INTERNAL, TARGET, MechanismGraph

FORMATS = (".dot", ".svg", ".png")
ENGINES = ("auto", "matplotlib", "graphviz")
COLOURS = {"input": "#9ecae1", "auxiliary": "#a1d99b", "constant": "#d9d9d9", "known": "#9ecae1",
           INTERNAL: "#fff7bc", TARGET: "#fc9272"}
ROLE_LABELS = {"input": "input", "auxiliary": "auxiliary input", "constant": "constant", "known": "known",
               INTERNAL: "internal quantity", TARGET: "target"}
_BLOCK_COLOUR = "#756bb1"
_DEGENERATE_COLOUR = "#de2d26"
_RECOVERED_COLOUR = "#e6550d"
_SWEEPS = 6


def _members(graph: MechanismGraph) -> dict[str, tuple[str, str]]:
    """Unknown -> (block kind, block id) for every unknown outside explicit steps."""
    out = {}
    for k, block in enumerate(graph.blocks):
        if block.kind != EXPLICIT:
            for name in block.unknowns:
                out[name] = (block.kind, f"b{k}")
    return out


def _coupled(graph: MechanismGraph, edge: tuple[str, str], members) -> bool:
    u, v = edge
    return u in members and v in members and members[u][1] == members[v][1]


def _label(name: str, recovered: Mapping[str, tuple[str, ...]]) -> str:
    return f"{name}\n= {', '.join(recovered[name])}" if recovered.get(name) else name


def to_dot(graph: MechanismGraph, *, title: str | None = None,
           recovered: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """The graph as Graphviz DOT text; ``recovered`` maps submitted quantities to the
    reference quantities they equal by value (outlined and labelled)."""
    recovered = recovered or {}
    members = _members(graph)
    quote = lambda text: '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'  # noqa: E731
    lines = ["digraph mechanism {", "  rankdir=TB;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
             '  edge [color="#555555"];']
    if title:
        lines.append(f"  label={quote(title)}; labelloc=t;")

    def node(name: str) -> str:
        extra = f', color="{_RECOVERED_COLOUR}", penwidth=3' if recovered.get(name) else ""
        return f'{quote(name)} [label={quote(_label(name, recovered))}, fillcolor="{COLOURS.get(graph.roles[name])}"{extra}];'

    clustered = set()
    for k, block in enumerate(graph.blocks):
        if block.kind == EXPLICIT:
            continue
        colour = _BLOCK_COLOUR if block.kind == IMPLICIT else _DEGENERATE_COLOUR
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f'    label={quote(block.kind + " block")}; style=dashed; color="{colour}";')
        lines += [f"    {node(name)}" for name in block.unknowns]
        lines.append("  }")
        clustered.update(block.unknowns)
    lines += [f"  {node(name)}" for name in graph.nodes if name not in clustered]
    for u, v in sorted(graph.edges):
        style = f' [style=dashed, color="{_BLOCK_COLOUR}"]' if _coupled(graph, (u, v), members) else ""
        lines.append(f"  {quote(u)} -> {quote(v)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ layout


def layers(graph: MechanismGraph) -> dict[str, int]:
    """Layer of every node: knowns 0, the unknowns of a block one below the deepest
    quantity the block uses (blocks come in dependency order)."""
    layer = {n: 0 for n, role in graph.roles.items() if role not in (INTERNAL, TARGET)}
    predecessors: dict[str, set[str]] = {n: set() for n in graph.roles}
    for u, v in graph.edges:
        predecessors[v].add(u)
    for block in graph.blocks:
        members = set(block.unknowns)
        used = set().union(*(predecessors[n] for n in members)) - members if members else set()
        depth = 1 + max((layer.get(n, 0) for n in used), default=0)
        for name in block.unknowns:
            layer[name] = depth
    for name in graph.roles:  # a target in no equation
        layer.setdefault(name, 1)
    return layer


def layout(graph: MechanismGraph) -> dict[str, tuple[float, float]]:
    """Positions (x, y): one row per layer (top: knowns), order within a row by
    barycentre sweeps over the neighbours in the rows above and below."""
    layer = layers(graph)
    rows: dict[int, list[str]] = {}
    for name in sorted(graph.roles, key=lambda n: (graph.roles[n], n)):
        rows.setdefault(layer[name], []).append(name)
    neighbours: dict[str, set[str]] = {n: set() for n in graph.roles}
    for u, v in graph.edges:
        neighbours[u].add(v)
        neighbours[v].add(u)
    position = {n: float(i) for row in rows.values() for i, n in enumerate(row)}
    depths = sorted(rows)
    for sweep in range(_SWEEPS):
        for depth in depths if sweep % 2 == 0 else reversed(depths):
            row = rows[depth]
            key = {}
            for n in row:
                near = [position[m] for m in neighbours[n] if layer[m] != depth]
                key[n] = sum(near) / len(near) if near else position[n]
            row.sort(key=lambda n: (key[n], position[n], n))
            for i, n in enumerate(row):
                position[n] = float(i)
    width = max(len(row) for row in rows.values())
    return {n: (i - (len(row) - 1) / 2 + (width - 1) / 2, -float(depth))
            for depth, row in rows.items() for i, n in enumerate(row)}


# ------------------------------------------------------------------ drawing


def draw(graph: MechanismGraph, axes, *, title: str | None = None,
         recovered: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """Draw the graph into matplotlib ``axes`` (see module doc)."""
    recovered = recovered or {}
    xy = layout(graph)
    members = _members(graph)
    scale_x, scale_y = 2.2, 1.6
    points = {n: (x * scale_x, y * scale_y) for n, (x, y) in xy.items()}
    for block in graph.blocks:
        if block.kind == EXPLICIT or not block.unknowns:
            continue
        xs = [points[n][0] for n in block.unknowns]
        ys = [points[n][1] for n in block.unknowns]
        colour = _BLOCK_COLOUR if block.kind == IMPLICIT else _DEGENERATE_COLOUR
        axes.add_patch(FancyBboxPatch((min(xs) - 0.95, min(ys) - 0.5), max(xs) - min(xs) + 1.9,
                                      max(ys) - min(ys) + 1.0, boxstyle="round,pad=0.05", fill=False,
                                      linestyle="--", edgecolor=colour, linewidth=1.2, zorder=1))
        axes.text(max(xs) + 0.95, max(ys) + 0.55, block.kind, color=colour, fontsize=7, ha="right", va="bottom")
    for name, (x, y) in points.items():
        highlight = bool(recovered.get(name))
        axes.text(x, y, _label(name, recovered), ha="center", va="center", fontsize=9, zorder=3,
                  bbox={"boxstyle": "round,pad=0.35", "facecolor": COLOURS.get(graph.roles[name], "white"),
                        "edgecolor": _RECOVERED_COLOUR if highlight else "#444444",
                        "linewidth": 2.5 if highlight else 0.8})
    for u, v in sorted(graph.edges):
        coupled = _coupled(graph, (u, v), members)
        bend = 0.25 if (v, u) in graph.edges else 0.0
        axes.add_patch(FancyArrowPatch(points[u], points[v], arrowstyle="-|>", mutation_scale=10,
                                       connectionstyle=f"arc3,rad={bend}", shrinkA=14, shrinkB=14, zorder=2,
                                       color=_BLOCK_COLOUR if coupled else "#555555",
                                       linestyle="--" if coupled else "-", linewidth=1.0))
    xs = [p[0] for p in points.values()]
    ys = [p[1] for p in points.values()]
    axes.set_xlim(min(xs) - 1.4, max(xs) + 1.4)
    axes.set_ylim(min(ys) - 0.9, max(ys) + 0.9)
    axes.set_axis_off()
    if title:
        axes.set_title(title, fontsize=10)


def legend_handles(graph: MechanismGraph, recovered: Mapping[str, tuple[str, ...]] | None = None) -> list:
    """Legend entries for the roles, blocks and highlights present in ``graph``."""
    roles = [r for r in ROLE_LABELS if r in set(graph.roles.values())]
    handles = [Patch(facecolor=COLOURS[r], edgecolor="#444444", label=ROLE_LABELS[r]) for r in roles]
    handles.append(Line2D([], [], color="#555555", label="explicit step"))
    if any(b.kind == IMPLICIT for b in graph.blocks):
        handles.append(Line2D([], [], color=_BLOCK_COLOUR, linestyle="--", label="implicit (coupled) block"))
    if any(b.kind not in (EXPLICIT, IMPLICIT) for b in graph.blocks):
        handles.append(Line2D([], [], color=_DEGENERATE_COLOUR, linestyle="--", label="under-/over-determined"))
    if recovered and any(recovered.values()):
        handles.append(Patch(facecolor="white", edgecolor=_RECOVERED_COLOUR, linewidth=2.5,
                             label="equals a reference quantity"))
    return handles


def figure_size(graph: MechanismGraph) -> tuple[float, float]:
    """Inches for one drawn graph: grows with the widest row and the number of rows."""
    layer = layers(graph)
    counts: dict[int, int] = {}
    for depth in layer.values():
        counts[depth] = counts.get(depth, 0) + 1
    return max(5.0, 1.5 * max(counts.values()) + 1.5), max(3.5, 1.3 * len(counts) + 1.2)


def render(graph: MechanismGraph, path: str | Path, *, title: str | None = None,
           recovered: Mapping[str, tuple[str, ...]] | None = None, engine: str = "auto") -> Path:
    """Write the graph to ``path`` (``.dot``, ``.svg`` or ``.png``, by its suffix)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{path}: unknown graph format {suffix or '(none)'}; expected one of {', '.join(FORMATS)}")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    dot = to_dot(graph, title=title, recovered=recovered)
    if suffix == ".dot":
        path.write_text(dot, encoding="utf-8")
        return path
    program = shutil.which("dot")
    if engine == "graphviz" and program is None:
        raise ValueError("engine graphviz: the dot program is not on PATH")
    if program is not None and engine != "matplotlib":
        subprocess.run([program, f"-T{suffix[1:]}", "-o", str(path)], input=dot.encode(), check=True,
                       capture_output=True, timeout=60)
        return path
    figure = Figure(figsize=figure_size(graph), layout="constrained")
    axes = figure.subplots()
    draw(graph, axes, title=title, recovered=recovered)
    figure.legend(handles=legend_handles(graph, recovered), loc="outside lower center", ncols=4, fontsize=8,
                  frameon=False)
    figure.savefig(path, dpi=110, metadata={"Date": None} if suffix == ".svg" else None)
    return path
