"""ActiveSciBench-GRN: signed regulatory graphs, scored edge by edge.

A task (YAML, ``benchmark: grn``): ``name``, ``motif`` (the motif-family label; the
problem's ``family``), ``version``, ``difficulty``, ``nodes`` (names) and ``edges``
(``A -> B`` activates, ``A -| B`` represses; self-loops and cycles allowed); optionally
a reference ``mechanism`` and the ranges of its roots, ``inputs`` (``fastscore.benchmarks.scm``).

A submission (the sweep's ``submission`` column, else ``mechanism``, else ``phenomenal``):
- an edge list: ``A -> B``, ``B -| C`` (also ``-->``, ``--|``, the arrows \u2192 and
  \u22a3, ``A activates B``, ``B represses C``: ``_EDGE``), separated by new lines, ``;`` or ``,``; a line
  ``motif: <label>`` gives the motif label;
- JSON: ``{"edges": [...], "motif": ...}`` with edges as ``"A -> B"`` texts,
  ``{"source", "target", "sign"}`` objects or ``[source, target, sign]`` lists (a bare
  list of edges is accepted too);
- a signed adjacency matrix: ``{"nodes": [...], "adjacency": [[...]]}``, row = source,
  column = target, entries in {-1, 0, +1};
- an SCM hypothesis in EvoSCM's JSON (``variables`` with ``role`` and
  ``observability`` or ``observed``, ``edges``, ``mechanisms``): its graph is scored;
  edges touching a variable declared unobserved (``observability`` latent / hidden /
  unobserved, or ``"observed": false``) that is not a node of the task are left out
  (no marginalisation); where the task has a reference mechanism, its ``mechanisms``
  equations are judged against it node by node (``fastscore.benchmarks.scm``: the
  ``grn_mech_*`` columns, null for other tasks); an edge of such a hypothesis without a
  sign (EvoSCM's edges carry none) takes the sign of its target's equation's partial
  derivative in its source, when one sign holds at every sampled point
  (``fastscore.benchmarks.scm.edge_signs``), else it is bad input naming the edge;
- EvoSCM's wrappers of several hypotheses (``candidates`` of an ``<scm_update>``, the
  ``selected_candidate_id`` of an ``<scm_final>``, or the agent's tagged reply text):
  the selected candidate is scored as above (``fastscore.benchmarks.evoscm``).
A sign is +1 / -1, ``+`` / ``-``, or a word (activation, activates, positive;
inhibition, inhibits, represses, repression, negative).  Bad input (a node the task
does not name, another sign, an edge given with both signs, a malformed line) makes
the row a ``parse_error`` with the reason.

Per attempt (S submitted and R reference (source, target, sign) triples):
precision |S∩R|/|S|, recall |S∩R|/|R|, F1 (each 0 when undefined: an empty graph
scores 0 even against an empty reference); sign accuracy: share of the directed
pairs present in both graphs whose signs agree (0 when none); exact graph: S = R;
motif: the labels equal after trimming, lower-casing and each run of ``-``, ``_``
and blanks -> one ``_`` (``motif_label``; no label submitted: false).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from fastscore.benchmarks.base import BadInput, Benchmark, base_fields, scored_rows, task_problem, yaml_format
from fastscore.benchmarks.evoscm import hypothesis, submission_data

NAME = "grn"
COLUMNS = {"grn_precision": pl.Float64, "grn_recall": pl.Float64, "grn_f1": pl.Float64,
           "grn_sign_accuracy": pl.Float64, "grn_exact": pl.Boolean, "grn_motif": pl.Boolean,
           "grn_n_edges": pl.Int64, "grn_mech_nodes": pl.Int64, "grn_mech_equivalent": pl.Int64,
           "grn_mech_share": pl.Float64, "grn_mech_all": pl.Boolean, "grn_mech_verdicts": pl.Utf8,
           "grn_mech_reason": pl.Utf8}
MINE = pl.col("domain") == NAME
WITH_MECHANISM = MINE & pl.col("grn_mech_nodes").is_not_null()
"""The scored rows of tasks with a reference mechanism (``grn_mech_nodes`` is the task's)."""
RATES = [("grn_f1", "GRN F1", pl.col("grn_f1").filter(MINE).fill_null(0.0).mean(), True),
         ("grn_exact", "GRN exact", pl.col("grn_exact").filter(MINE).fill_null(False).mean(), True),
         ("grn_motif", "GRN motif", pl.col("grn_motif").filter(MINE).fill_null(False).mean(), True),
         ("grn_mech_share", "GRN mechanism share",
          pl.col("grn_mech_share").filter(WITH_MECHANISM).fill_null(0.0).mean(), True),
         ("grn_mech_all", "GRN mechanism all",
          pl.col("grn_mech_all").filter(WITH_MECHANISM).fill_null(False).mean(), True)]
OUTCOMES = [("grn_exact", "GRN exact graph", "grn_exact"),
            ("grn_mech_all", "GRN mechanism all equivalent", "grn_mech_all",
             pl.col("grn_mech_nodes").is_not_null().any().over("task"))]
"""pass@k outcomes: (name, label, column[, rows]); ``grn_mech_all`` counts every row, ``missing``
ones included, of the tasks with a reference mechanism."""

_SIGNS = {"+1": 1, "1": 1, "+": 1, "-1": -1, "-": -1, "activation": 1, "activates": 1, "activate": 1,
          "positive": 1, "inhibition": -1, "inhibits": -1, "inhibit": -1, "represses": -1, "repression": -1,
          "repress": -1, "negative": -1}
_EDGE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(-+>|\u2192|-+\||\u22a3|\s(?i:activates|induces|promotes|"
                   r"inhibits|represses)\s)\s*([A-Za-z_][A-Za-z0-9_.]*)\s*$")
"""One edge of a text (the slow path): ``A -> B`` / ``A -| B``, also ``-->``, ``--|``, the
arrows \u2192 and \u22a3, and ``A activates|induces|promotes B`` / ``A inhibits|represses B``."""
_REPRESSING = frozenset({"inhibits", "represses"})
_SPLIT = re.compile(r"[\n;,]")
_ITEM = r"[ \t\r]*([A-Za-z_][A-Za-z0-9_.]*)[ \t\r]*(->|-\|)[ \t\r]*([A-Za-z_][A-Za-z0-9_.]*)[ \t\r]*"
_EDGES = re.compile(_ITEM)
_ONLY_EDGES = re.compile(r"(?:[\s;,]*[A-Za-z_][A-Za-z0-9_.]*[ \t\r]*(?:->|-\|)[ \t\r]*[A-Za-z_][A-Za-z0-9_.]*"
                         r"(?=[ \t\r]*(?:[\n;,]|\Z)))*[\s;,]*")
"""A text of edges only (the fast path; anything else is read part by part, which says what is wrong)."""
_LINE_EDGE = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_.]*)[ \t\r]*(->|-\|)[ \t\r]*([A-Za-z_][A-Za-z0-9_.]*)[ \t\r]*)?")
"""A line of the fastest path: blank, or one edge (as ``_ONLY_EDGES`` reads a line)."""
_KEPT = 1 << 16
"""At most this many lines, graphs and scores kept per batch."""


_SIGN_OF = {"->": 1, "-|": -1}
_MOTIF_KEYS = frozenset({"motif", "motif_family", "motif family"})
_MOTIF_LINE = re.compile(r"^[ \t]*motif(?:[ _]family)?[ \t]*:([^\n]*)$", re.M | re.I)
_MOTIF_BLANKS = re.compile(r"[\s\-_]+")
_UNOBSERVED = frozenset({"latent", "hidden", "unobserved", "unobservable"})
MAX_TEXT = 1 << 20


class Graph(tuple):
    """A signed graph: a frozenset of (source, target, sign) and the motif label (or None)."""


def motif_label(text) -> str | None:
    """The comparable form of a motif label: trimmed, lower-cased, each run of blanks,
    ``-`` and ``_`` one ``_``, none at either end (None when absent or empty)."""
    if text is None:
        return None
    text = str(text).strip().lower()
    if text.isidentifier() and "__" not in text and text[0] != "_" and text[-1] != "_":
        return text  # the common label: nothing to rewrite
    return _MOTIF_BLANKS.sub("_", text).strip("_") or None


def _sign(value, where: str) -> int:
    if isinstance(value, bool):
        raise BadInput(f"{where}: sign {value!r} is not +1 or -1")
    if isinstance(value, (int, float)):
        if value in (1, -1):
            return int(value)
        raise BadInput(f"{where}: sign {value!r} is not +1 or -1")
    sign = _SIGNS.get(str(value).strip().lower())
    if sign is None:
        raise BadInput(f"{where}: sign {str(value)[:40]!r} is not +1 or -1")
    return sign


def _nodes(nodes: frozenset, source, target, where: str) -> None:
    for name in (source, target):
        if not isinstance(name, str) or name not in nodes:
            raise BadInput(f"{where}: node {str(name)[:40]!r} is not a node of the task")


def _add(edges: dict, nodes: frozenset, source, target, sign: int, where: str) -> None:
    _nodes(nodes, source, target, where)
    if edges.setdefault((source, target), sign) != sign:
        raise BadInput(f"{where}: edge {source} -> {target} is given with both signs")


def _text_edge(text: str, where: str) -> tuple[str, str, int]:
    match = _EDGE.match(text)
    if match is None:
        raise BadInput(f"{where}: {text.strip()[:60]!r} is not an edge 'A -> B' or 'A -| B'")
    source, arrow, target = match.groups()
    arrow = arrow.strip()
    negative = arrow.endswith("|") or arrow == "\u22a3" or arrow.lower() in _REPRESSING
    return source, target, -1 if negative else 1


def _json_edge(item, where: str, unsigned: bool = False) -> tuple[str, str, int | None]:
    """(source, target, sign) of a JSON edge; sign None for an edge without one when
    ``unsigned`` (an SCM hypothesis's edge: its sign comes from the equations)."""
    if isinstance(item, str):
        return _text_edge(item, where)
    if isinstance(item, Mapping):
        source = item.get("source", item.get("from"))
        target = item.get("target", item.get("to"))
        if source is None or target is None:
            raise BadInput(f"{where}: an edge needs 'source' and 'target'")
        sign = item.get("sign", item.get("type", item.get("effect")))
    elif isinstance(item, (list, tuple)) and len(item) == 3:
        return item[0], item[1], _sign(item[2], where)
    elif isinstance(item, (list, tuple)) and len(item) == 2:
        source, target, sign = item[0], item[1], None
    else:
        raise BadInput(f"{where}: an edge must be a text, an object or [source, target, sign]")
    if sign is not None:
        return source, target, _sign(sign, where)
    if unsigned:
        return source, target, None
    raise BadInput(f"{where}: edge {str(source)[:30]} -> {str(target)[:30]} has no sign (give 'sign', or "
                   "an SCM hypothesis's 'mechanisms' to take it from)")


def _adjacency(data: Mapping, nodes: frozenset, edges: dict) -> None:
    names, matrix = data.get("nodes"), data.get("adjacency")
    if not isinstance(names, list) or not isinstance(matrix, list) or len(matrix) != len(names):
        raise BadInput("adjacency: needs 'nodes' and a square 'adjacency' of as many rows")
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise BadInput(f"adjacency: node {str(twice)[:40]!r} is named twice in 'nodes'")
    for i, row in enumerate(matrix):
        if not isinstance(row, list) or len(row) != len(names):
            raise BadInput(f"adjacency[{i}]: expected {len(names)} entries")
        for j, value in enumerate(row):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in (-1, 0, 1):
                raise BadInput(f"adjacency[{i}][{j}]: {str(value)[:20]!r} is not -1, 0 or +1")
            if value:
                _add(edges, nodes, names[i], names[j], int(value), f"adjacency[{i}][{j}]")


def _edges_only(text: str, nodes: frozenset) -> frozenset | None:
    """The graph of a text of valid edges only (the fast path); None for anything else."""
    if not _ONLY_EDGES.fullmatch(text):
        return None
    found = _EDGES.findall(text)
    triples = {(s, t, _SIGN_OF[a]) for s, a, t in found}
    if len({(s, t) for s, t, _ in triples}) != len(triples):
        return None  # an edge with both signs
    if not nodes.issuperset([s for s, _, _ in found]) or not nodes.issuperset([t for _, _, t in found]):
        return None
    return frozenset(triples)


class EdgeLines:
    """A memo of the edge lines of one task's submissions (its nodes), kept across a
    batch (``score_task``): a line's edge as one bit of a graph's mask (bit ``2k`` for
    the k-th (source, target) pair seen with sign +1, ``2k + 1`` with -1; 0 for a blank
    line) and each mask's graph, so that a graph seen before is not built again."""

    __slots__ = ("nodes", "bits", "pairs", "edges", "graphs", "plus")

    def __init__(self, nodes: frozenset):
        self.nodes = nodes
        self.bits: dict = {}    # line -> its bit
        self.pairs: dict = {}   # (source, target) -> k
        self.edges: dict = {}   # bit -> (source, target, sign)
        self.graphs: dict = {}  # mask -> frozenset of (source, target, sign)
        self.plus = 0           # the bits of sign +1 (a mask & (mask >> 1) & plus: a pair with both signs)

    def bit(self, line: str) -> int | None:
        """A line's bit (0: blank; None: not a line of one valid edge), kept."""
        found = _LINE_EDGE.fullmatch(line)
        if found is None:
            return None
        source, arrow, target = found.groups()
        if source is None:
            bit = 0
        elif source not in self.nodes or target not in self.nodes:
            return None
        else:
            k = self.pairs.get((source, target))
            if k is None:
                k = self.pairs[source, target] = len(self.pairs)
                self.plus |= 1 << (2 * k)
            bit = 1 << (2 * k + (arrow != "->"))
            self.edges[bit] = (source, target, _SIGN_OF[arrow])
        if len(self.bits) < _KEPT:
            self.bits[line] = bit
        return bit

    def graph(self, mask: int) -> frozenset:
        """The graph of a mask (its edges' bits), kept."""
        graph = self.graphs.get(mask)
        if graph is None:
            edges, rest = [], mask
            while rest:
                low = rest & -rest
                edges.append(self.edges[low])
                rest ^= low
            graph = frozenset(edges)
            if len(self.graphs) < _KEPT:
                self.graphs[mask] = graph
        return graph

    def scan(self, text: str) -> tuple[int, str | None] | None:
        """The mask and motif label of the common text: lines of valid edges and at most
        one motif line, no ``;`` or ``,`` (the fastest path; the same graph and motif as
        ``parse_graph``'s other paths); None for anything else."""
        if ";" in text or "," in text:
            return None
        known = self.bits
        mask = 0
        motif = None
        for piece in text.split("\n"):
            bit = known.get(piece)
            if bit is None:
                if ":" not in piece:  # an edge line has no colon, a motif line has one
                    bit = self.bit(piece)
                    if bit is None:
                        return None
                elif motif is not None:
                    return None
                elif piece.startswith("motif:"):  # what _MOTIF_LINE reads of it
                    motif = piece[6:]
                    continue
                else:
                    found = _MOTIF_LINE.fullmatch(piece)
                    if found is None or "otif" not in text:
                        return None  # "otif" not in text: read by the slow path
                    motif = found.group(1)
                    continue
            mask |= bit
        if mask & (mask >> 1) & self.plus:
            return None  # an edge with both signs: the slow path says which
        return mask, None if motif is None else motif_label(motif)


def _edge_lines(text: str, lines: EdgeLines) -> tuple[frozenset, str | None] | None:
    """The graph and motif of the common text (``EdgeLines.scan``); None for anything else."""
    found = lines.scan(text)
    if found is None:
        return None
    graph = lines.graphs.get(found[0])
    return graph if graph is not None else lines.graph(found[0]), found[1]


def unobserved(data: Mapping) -> set:
    """The names of an SCM hypothesis's variables declared unobserved (``observability``
    latent / hidden / unobserved / unobservable, or EvoSCM's ``"observed": false``);
    ``variables`` a list or a name -> object map."""
    hidden = set()
    variables = data.get("variables") or ()
    if isinstance(variables, Mapping):
        variables = [{"name": k, **(v if isinstance(v, Mapping) else {})} for k, v in variables.items()]
    for variable in variables if isinstance(variables, list) else ():
        if isinstance(variable, Mapping) and (variable.get("observed") is False or str(
                variable.get("observability", "")).lower() in _UNOBSERVED):
            hidden.add(variable.get("name"))
    return hidden


def parse_graph(text: str, nodes: frozenset, lines: EdgeLines | None = None,
                ranges: Mapping | None = None) -> tuple[frozenset, str | None]:
    """A submission -> (frozenset of (source, target, sign), motif label or None);
    raises ``BadInput`` with the reason.  ``lines``: the batch's memo for ``nodes``, or None;
    ``ranges``: the task's roots' ranges (root -> (low, high)) an unsigned edge's sign is
    read over (``fastscore.benchmarks.scm.edge_signs``)."""
    if len(text) > MAX_TEXT:
        raise BadInput(f"submission longer than {MAX_TEXT} characters")
    graph = _edge_lines(text, EdgeLines(nodes) if lines is None else lines)  # never a JSON text
    if graph is not None:
        return graph
    edges: dict = {}
    data = submission_data(text)  # JSON, or EvoSCM's tagged reply; None for a text of edges
    if data is not None:
        if isinstance(data, list):
            data = {"edges": data}
        if not isinstance(data, Mapping):
            raise BadInput("a JSON submission must be an object or a list of edges")
        motif = data.get("motif", data.get("motif_family"))
        data = hypothesis(data)  # EvoSCM's candidates: the selected one
        motif = data.get("motif", data.get("motif_family", motif))
        if "adjacency" in data:
            _adjacency(data, nodes, edges)
        else:
            hidden = unobserved(data)
            items = data.get("edges")
            if not isinstance(items, list):
                raise BadInput("a JSON submission needs a list 'edges' (or 'adjacency')")
            unsigned, scm = [], "mechanisms" in data  # an SCM hypothesis's edges without a sign: signed by its equations
            for i, item in enumerate(items):
                source, target, sign = _json_edge(item, f"edges[{i}]", scm)
                if (source in hidden and source not in nodes) or (target in hidden and target not in nodes):
                    continue
                if sign is None:
                    _nodes(nodes, source, target, f"edges[{i}]")
                    unsigned.append((source, target, f"edges[{i}]"))
                else:
                    _add(edges, nodes, source, target, sign, f"edges[{i}]")
            if unsigned:
                from fastscore.benchmarks.scm import edge_signs  # SymEngine: only for such hypotheses
                for (source, target, where), sign in zip(unsigned, edge_signs(data, unsigned, sorted(nodes),
                                                                               ranges or {})):
                    _add(edges, nodes, source, target, sign, where)
        return frozenset((s, t, g) for (s, t), g in edges.items()), motif_label(motif)
    motif, body = None, text
    if "otif" in text:  # one motif line: read apart
        found = _MOTIF_LINE.search(text)
        if found is not None and _MOTIF_LINE.search(text, found.end()) is None:
            motif, body = motif_label(found.group(1)), text[:found.start()] + text[found.end():]
    graph = _edges_only(body, nodes)
    if graph is not None:
        return graph, motif
    motif = None  # the slow path: part by part, saying what is wrong
    for i, part in enumerate(_SPLIT.split(text)):
        if not part.strip():
            continue
        head, colon, rest = part.partition(":")
        if colon and head.strip().lower() in _MOTIF_KEYS:
            motif = motif_label(rest)
            continue
        source, target, sign = _text_edge(part, f"edge {i + 1}")
        _add(edges, nodes, source, target, sign, f"edge {i + 1}")
    return frozenset((s, t, g) for (s, t), g in edges.items()), motif


def graph_scores(submitted: frozenset, reference: frozenset, motif: str | None, reference_motif: str | None,
                 pairs: Mapping | None = None) -> dict:
    """The per-attempt scores of a submitted signed graph against the reference (module
    doc); ``pairs``: the reference's (source, target) -> sign, when already made."""
    hits = len(submitted & reference)
    precision = hits / len(submitted) if submitted else 0.0
    recall = hits / len(reference) if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    if pairs is None:
        pairs = {(s, t): g for s, t, g in reference}
    shared = agree = 0
    for s, t, g in submitted:
        sign = pairs.get((s, t))
        if sign is not None:
            shared += 1
            agree += sign == g
    return {"grn_precision": precision, "grn_recall": recall, "grn_f1": f1,
            "grn_sign_accuracy": agree / shared if shared else 0.0, "grn_exact": submitted == reference,
            "grn_motif": motif is not None and motif == reference_motif, "grn_n_edges": len(submitted)}


def task_fields(task: Mapping) -> dict:
    """The columns every row of a task carries, ``missing`` cells too: ``grn_mech_nodes``
    for a task with a reference mechanism (so its rates count a missing cell as 0)."""
    spec = task.get("mechanism")
    return {} if spec is None else {"grn_mech_nodes": len(spec.judged)}


def _read_task(path: Path, root: Path, data: Mapping):
    nodes = data.get("nodes")
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) and n for n in nodes):
        raise ValueError("nodes: expected a list of names")
    if len(set(nodes)) != len(nodes):
        raise ValueError("nodes: a name is given twice")
    edges = data.get("edges") or []
    if not isinstance(edges, list):
        raise ValueError("edges: expected a list")
    try:
        reference, _ = parse_graph(json.dumps({"edges": edges}), frozenset(nodes))
    except BadInput as error:
        raise ValueError(f"edges: {error}") from None
    task = {"nodes": frozenset(nodes), "edges": reference, "motif": motif_label(data.get("motif")),
            "pairs": {(s, t): g for s, t, g in reference},
            "version": None if data.get("version") is None else str(data["version"]),
            "difficulty": None if data.get("difficulty") is None else str(data["difficulty"]), "mechanism": None}
    if data.get("mechanism") is not None or data.get("inputs") is not None:
        from fastscore.benchmarks.scm import read_mechanism  # SymEngine and Numba: only for such tasks
        task["mechanism"] = read_mechanism(data, nodes, reference)
    return task_problem(path, root, benchmark=NAME, task=task, name=str(data.get("name") or path.stem),
                        description=str(data.get("description") or ""), family=task["motif"])


def score_task(problem, rows: Sequence[Mapping], settings=None) -> list[dict]:
    """The score rows of a batch of GRN submissions to one task (repeats parsed once; a
    batch keeps its edge lines, ``parse_graph``, and the scores of each graph seen)."""
    task = problem.task
    base = base_fields(problem, version=task["version"], difficulty=task["difficulty"])
    nodes, reference, reference_motif, pairs = task["nodes"], task["edges"], task["motif"], task["pairs"]
    lines = EdgeLines(nodes)
    spec = task.get("mechanism")
    ranges = {} if spec is None else dict(zip(spec.roots, spec.ranges))
    scored: dict = {}  # graph -> its fields without and with the motif
    masks: dict = {}   # mask (EdgeLines) -> the same

    def of_graph(edges: frozenset) -> tuple[dict, dict]:
        both = scored.get(edges)
        if both is None:
            fields = graph_scores(edges, reference, None, reference_motif, pairs)
            both = (fields, {**fields, "grn_motif": True})
            if len(scored) < _KEPT:
                scored[edges] = both
        return both

    def attempt(text: str):
        found = lines.scan(text) if len(text) <= MAX_TEXT else None
        if found is None:
            edges, motif = parse_graph(text, nodes, lines, ranges)
            both = of_graph(edges)
        else:
            mask, motif = found
            both = masks.get(mask)
            if both is None:
                both = of_graph(lines.graph(mask))
                if len(masks) < _KEPT:
                    masks[mask] = both
        return None, both[motif is not None and motif == reference_motif]  # one object per result

    if task.get("mechanism") is None:
        return scored_rows(rows, base, attempt)
    from fastscore.benchmarks.scm import MechanismJudge
    judge = MechanismJudge(problem, task["mechanism"], settings)

    def with_mechanism(text: str):
        _, fields = attempt(text)  # parse_graph's errors stop the row first
        error, mechanism = judge.fields(text)
        return error, {**fields, **mechanism}

    return scored_rows(rows, {**base, **task_fields(task)}, with_mechanism)


BENCHMARK = Benchmark(NAME, yaml_format("grn", NAME, _read_task), score_task, COLUMNS)
