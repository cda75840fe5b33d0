"""Family files → checked ``Family`` values, and how a mutation merges into a mechanism.

A *family* is a canonical mechanism (the Original) plus five base mutations
Δ1…Δ5; every subset of them gives one instance of the problem library, composed,
solved and written by ``fastscore.library.compose``.  Mutations compose at the mechanism
level, independently of their order (``apply_mutation``).

Family file format (``problems/mechbench/<family>.family.yaml``)::

    family: vacancy-diffusion          # slug; task ids are <family>/original, <family>/variant-1-2
    title: Vacancy Diffusion           # problem_name is "<title> - Original" / "<title> - Variant 1-2"
    domain: materials                  # physics | chemistry | biology | materials | ...
    description: ...                   # problem_description of every instance
    target: {name, description, unit}
    inputs:        [{name, description, unit, sampling: {min, ood_boundary, max, distribution}}]
    constants:     [{name, value, unit, description}]
    intermediates: [{name, description, unit}]
    relations:                         # the Original mechanism, one named relation each
    - id: cv                           # a plain relation: one equation
      equation: cv = exp(-H_f/(kB*T))
      description: ...
      probe: cv                        # optional: the intermediate probed when a mutation edits it
    - id: Hf                           # a balance: a sum of named terms on each side
      balance:
        left: {enthalpy: H_f}
        right: {formation: Ef, work: p*Omega}
      description: ...
    original_probes: [cv]              # probes of the Original (1 to 5 intermediates)
    mutations:
    - index: 1                         # 1..5, each exactly once
      name: ...
      kind: ...                        # e.g. "source term in a balance"
      description: ...
      edits:                           # edits of *original* relations, or new relations
      - replace: cm                    # a plain relation gets a new equation
        equation: cm = cv/(1 + 3*exp(-Et/(kB*T)))
        description: ...               # replaces the relation's description
      - add_terms: Eb                  # a balance gains terms (left and/or right)
        right: {pressure: Omega*p**2/pref}
        description: ...               # appended to the relation's description
      - replace_term: Hf               # one named original term of a balance changes
        side: right
        term: work
        expr: p*Omega - Omega*p**2/(2*Bmod)
        description: ...               # appended to the relation's description
      - add_relation: {id, equation | balance, description, probe?}
    core_set: [[], [1], [3], [1, 2], ...]   # 10 subsets: 0, 1, 1, 2, 2, 3, 3, 4, 4, 5 mutations

Every name (target, inputs, constants, intermediates, including those only a
mutation uses) is declared once at the family level; an instance lists the ones
its composed mechanism uses. Formulas are read by the whitelisted parser
(``fastscore.text.parse``); undeclared ``pi`` is π.

Composition rules (which make the merge well defined and order-independent):

* edits name original relations only; ``add_relation`` ids are new;
* two mutations may edit the same relation only if their edits agree: the same
  ``replace`` / ``replace_term`` / ``add_relation`` text, or ``add_terms`` whose
  terms either have distinct ids or are the same term (same id and expression);
* a balance keeps the *union* of its terms, each term once (original terms first,
  then added terms by mutation index); descriptions are merged the same way.

These conflicts are pairwise, so ``load_family`` checks every pair of mutations and
any subset then composes without conflict. An instance's probes are the probes of
the relations its mutations edit or add (``original_probes`` for the Original),
each once, one to five of them.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from fastscore.problems.model import Constant, FieldReader, Variable
from fastscore.text.parse import parse_equation, parse_expression
from fastscore.text.tokens import ParseError

__all__ = [
    "Edit", "Family", "FamilyError", "Mechanism", "Mutation", "Relation", "Term", "apply_mutation",
    "load_families", "load_family", "original_mechanism",
]

FAMILY_SUFFIX = ".family.yaml"
N_MUTATIONS = 5
CORE_SET_SIZES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 5)  # mutation counts of the 10 Core-set instances


class FamilyError(ValueError):
    """A family file, or one of its composed instances, that cannot be used; one line."""


# ------------------------------------------------------------------ family model


@dataclass(frozen=True)
class Term:
    """One named term of a balance; ``origin`` is 0 (Original) or the mutation index."""

    id: str
    expr: str
    origin: int = 0
    replaced_by: int = 0  # the mutation that replaced its expression (replace_term)


@dataclass(frozen=True)
class Relation:
    """A named relation: a plain ``equation`` or a balance (``left`` = ``right`` sums of terms).

    ``notes`` are (origin, text) description parts; the first is the base description.
    """

    id: str
    notes: tuple[tuple[int, str], ...]
    probe: str | None = None
    equation: str | None = None
    left: tuple[Term, ...] = ()
    right: tuple[Term, ...] = ()
    origin: int = 0  # 0, or the index of the mutation that added it
    replaced_by: int = 0  # the mutation that replaced its equation

    @property
    def is_balance(self) -> bool:
        """A balance of terms, not a plain equation."""
        return self.equation is None

    @property
    def description(self) -> str:
        """The description parts, each once, in order of origin."""
        ordered = sorted(self.notes, key=lambda note: note[0])
        return " ".join(dict.fromkeys(text for _, text in ordered))

    def text(self) -> str:
        """The relation as one equation ``lhs = rhs``."""
        if self.equation is not None:
            return self.equation
        return f"{_sum_text(self.left)} = {_sum_text(self.right)}"


@dataclass(frozen=True)
class Edit:
    """One edit of a mutation: ``kind`` in replace | add_terms | replace_term | add_relation."""

    kind: str
    target: str  # the relation id edited (or added)
    note: str
    equation: str | None = None  # replace
    left: tuple[Term, ...] = ()  # add_terms
    right: tuple[Term, ...] = ()
    side: str | None = None  # replace_term
    term: str | None = None
    expr: str | None = None
    relation: Relation | None = None  # add_relation


@dataclass(frozen=True)
class Mutation:
    """One base mutation Δ``index``: a named, interpretable set of edits."""

    index: int
    name: str
    kind: str
    description: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Family:
    """A family source: declared names, the Original's relations, five mutations, the Core set."""

    name: str
    title: str
    domain: str
    description: str
    target: Variable
    inputs: tuple[Variable, ...]
    constants: tuple[Constant, ...]
    intermediates: tuple[Variable, ...]
    relations: tuple[Relation, ...]
    original_probes: tuple[str, ...]
    mutations: tuple[Mutation, ...]  # index 1..5 in order
    core_set: tuple[frozenset[int], ...]
    source: str

    def mutation(self, index: int) -> Mutation:
        """Mutation Δ``index``."""
        return self.mutations[index - 1]

    @property
    def names(self) -> tuple[str, ...]:
        """Every declared name."""
        return (self.target.name, *(v.name for v in self.inputs), *(c.name for c in self.constants),
                *(v.name for v in self.intermediates))


Mechanism = tuple[Relation, ...]
"""A (composed) mechanism: relations in a canonical order."""


# ------------------------------------------------------------------ reading


def _terms(read: FieldReader, data, where: str, origin: int) -> tuple[Term, ...]:
    if data is None:
        return ()
    if not isinstance(data, Mapping) or not data:
        raise read.error(where, "expected a mapping of term id to expression")
    return tuple(Term(id=str(key), expr=str(value).strip(), origin=origin) for key, value in data.items())


def _relation(read: FieldReader, data, where: str, origin: int) -> Relation:
    data = read.mapping(data, where, keys=("id", "equation", "balance", "description", "probe"),
                        required=("id", "description"))
    relation_id = read.text(str(data["id"]), f"{where}.id", stripped=True)
    notes = ((origin, read.text(data["description"], f"{where}.description", stripped=True)),)
    probe = None if data.get("probe") is None else read.text(data["probe"], f"{where}.probe", stripped=True)
    if (data.get("equation") is None) == (data.get("balance") is None):
        raise read.error(where, "give exactly one of 'equation' and 'balance'")
    if data.get("equation") is not None:
        return Relation(id=relation_id, notes=notes, probe=probe, origin=origin,
                        equation=read.text(data["equation"], f"{where}.equation", stripped=True))
    balance = read.mapping(data["balance"], f"{where}.balance", keys=("left", "right"), required=("left", "right"))
    return Relation(id=relation_id, notes=notes, probe=probe, origin=origin,
                    left=_terms(read, balance["left"], f"{where}.balance.left", 0),
                    right=_terms(read, balance["right"], f"{where}.balance.right", 0))


_EDIT_KEYS = {
    "replace": ("replace", "equation", "description"),
    "add_terms": ("add_terms", "left", "right", "description"),
    "replace_term": ("replace_term", "side", "term", "expr", "description"),
    "add_relation": ("add_relation",),
}


def _edit(read: FieldReader, data, where: str, index: int) -> Edit:
    read.mapping(data, where)
    kinds = [kind for kind in _EDIT_KEYS if kind in data]
    if len(kinds) != 1:
        raise read.error(where, f"give exactly one of {', '.join(_EDIT_KEYS)}")
    kind = kinds[0]
    data = read.mapping(data, where, keys=_EDIT_KEYS[kind], required=_EDIT_KEYS[kind][:1])
    if kind == "add_relation":
        relation = _relation(read, data[kind], f"{where}.add_relation", index)
        return Edit(kind=kind, target=relation.id, note="", relation=relation)
    target = read.text(str(data[kind]), f"{where}.{kind}", stripped=True)
    note = read.text(data.get("description"), f"{where}.description", stripped=True)
    if kind == "replace":
        return Edit(kind=kind, target=target, note=note,
                    equation=read.text(data.get("equation"), f"{where}.equation", stripped=True))
    if kind == "add_terms":
        left = _terms(read, data.get("left"), f"{where}.left", index)
        right = _terms(read, data.get("right"), f"{where}.right", index)
        if not left and not right:
            raise read.error(where, "add_terms needs 'left' or 'right' terms")
        return Edit(kind=kind, target=target, note=note, left=left, right=right)
    if data.get("side") not in ("left", "right"):
        raise read.error(f"{where}.side", "must be left or right")
    return Edit(kind=kind, target=target, note=note, side=data["side"],
                term=read.text(str(data.get("term")), f"{where}.term", stripped=True),
                expr=read.text(str(data.get("expr")), f"{where}.expr", stripped=True))


def _mutation(read: FieldReader, data, where: str) -> Mutation:
    data = read.mapping(data, where, keys=("index", "name", "kind", "description", "edits"),
                        required=("index", "name", "kind", "description", "edits"))
    index = data["index"]
    if not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= N_MUTATIONS:
        raise read.error(f"{where}.index", f"must be an integer 1..{N_MUTATIONS}")
    edits = tuple(_edit(read, item, f"{where}.edits[{i}]", index)
                  for i, item in enumerate(read.sequence(data["edits"], f"{where}.edits")))
    if not edits:
        raise read.error(f"{where}.edits", "a mutation needs at least one edit")
    return Mutation(index=index, name=read.text(data["name"], f"{where}.name", stripped=True),
                    kind=read.text(data["kind"], f"{where}.kind", stripped=True),
                    description=read.text(data["description"], f"{where}.description", stripped=True), edits=edits)


_FAMILY_KEYS = ("family", "title", "domain", "description", "target", "inputs", "constants", "intermediates",
                "relations", "original_probes", "mutations", "core_set")


def load_family(path: str | Path) -> Family:
    """Read and check one family file (schema, formulas, mutation conflicts, Core-set shape)."""
    source = str(path)
    read = FieldReader(source, error=FamilyError)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise FamilyError(f"{source}: cannot read: {str(error).splitlines()[0]}") from None
    data = read.mapping(data, "family", keys=_FAMILY_KEYS, required=_FAMILY_KEYS)
    name = read.text(data["family"], "family", stripped=True)
    if not Path(source).name == f"{name}{FAMILY_SUFFIX}":
        raise read.error("family", f"the file must be named {name}{FAMILY_SUFFIX}")
    mutations = sorted((_mutation(read, item, f"mutations[{i}]")
                        for i, item in enumerate(read.sequence(data["mutations"], "mutations"))),
                       key=lambda m: m.index)
    if [m.index for m in mutations] != list(range(1, N_MUTATIONS + 1)):
        raise read.error("mutations", f"needs mutations with indices 1..{N_MUTATIONS}, each once")
    core = []
    for i, subset in enumerate(read.sequence(data["core_set"], "core_set")):
        if not isinstance(subset, list) or any(not isinstance(k, int) or not 1 <= k <= N_MUTATIONS for k in subset):
            raise read.error(f"core_set[{i}]", f"expected a list of mutation indices 1..{N_MUTATIONS}")
        core.append(frozenset(subset))
    if sorted(len(s) for s in core) != list(CORE_SET_SIZES) or len(set(core)) != len(core):
        raise read.error("core_set", "needs 10 distinct subsets: the Original, two each of 1..4 mutations, all five")
    family = Family(
        name=name, title=read.text(data["title"], "title", stripped=True),
        domain=read.text(data["domain"], "domain", stripped=True),
        description=read.text(data["description"], "description", stripped=True),
        target=read.variable(data["target"], "target", needs_sampling=False, complete=True),
        inputs=tuple(read.variable(v, f"inputs[{i}]", needs_sampling=True, complete=True)
                     for i, v in enumerate(read.sequence(data["inputs"], "inputs"))),
        constants=tuple(read.constant(c, f"constants[{i}]", complete=True)
                        for i, c in enumerate(read.sequence(data["constants"], "constants"))),
        intermediates=tuple(read.variable(v, f"intermediates[{i}]", needs_sampling=False, complete=True)
                            for i, v in enumerate(read.sequence(data["intermediates"], "intermediates"))),
        relations=tuple(_relation(read, r, f"relations[{i}]", 0)
                        for i, r in enumerate(read.sequence(data["relations"], "relations"))),
        original_probes=tuple(read.text(p, "original_probes", stripped=True)
                              for p in read.sequence(data["original_probes"], "original_probes")),
        mutations=tuple(mutations), core_set=tuple(core), source=source,
    )
    _check_family(family, read)
    return family


def load_families(directory: str | Path) -> list[Family]:
    """Every ``*.family.yaml`` directly in ``directory``, sorted by family name."""
    paths = sorted(Path(directory).glob(f"*{FAMILY_SUFFIX}"))
    if not paths:
        raise FamilyError(f"{directory}: no family files (*{FAMILY_SUFFIX}) found")
    return [load_family(path) for path in paths]


def _check_family(family: Family, read: FieldReader) -> None:
    names = family.names
    duplicated = [n for n in set(names) if names.count(n) > 1]
    if duplicated:
        raise read.error("names", f"declared more than once: {', '.join(sorted(duplicated))}")
    intermediates = {v.name for v in family.intermediates}
    original = {r.id: r for r in family.relations}
    if len(original) != len(family.relations):
        raise read.error("relations", "relation ids must be unique")
    relations = list(family.relations)
    for mutation in family.mutations:
        for edit in mutation.edits:
            where = f"mutation {mutation.index}, {edit.kind} {edit.target}"
            if edit.kind == "add_relation":
                if edit.target in original:
                    raise read.error(where, "an added relation needs a new id")
                relations.append(edit.relation)
                continue
            base = original.get(edit.target)
            if base is None:
                raise read.error(where, "edits must name an original relation")
            if edit.kind == "replace" and base.is_balance:
                raise read.error(where, "a balance is edited with add_terms or replace_term")
            if edit.kind in ("add_terms", "replace_term") and not base.is_balance:
                raise read.error(where, "only a balance has terms")
            if edit.kind == "replace_term" and edit.term not in {t.id for t in getattr(base, edit.side)}:
                raise read.error(where, f"no original term '{edit.term}' on the {edit.side}")
    for relation in relations:
        if relation.probe is not None and relation.probe not in intermediates:
            raise read.error(f"relation {relation.id}", f"probe '{relation.probe}' is not an intermediate")
    for name in family.original_probes:
        if name not in intermediates:
            raise read.error("original_probes", f"'{name}' is not an intermediate")
    texts = [r.text() for r in relations]
    texts += [e.equation for m in family.mutations for e in m.edits if e.equation is not None]
    texts += [f"{family.target.name} = {e.expr}" for m in family.mutations for e in m.edits if e.expr is not None]
    texts += [f"{family.target.name} = {t.expr}" for m in family.mutations for e in m.edits for t in e.left + e.right]
    for text in texts:
        try:
            parse_equation(text, names=names)
        except ParseError as error:
            raise read.error("formula", f"{text!r}: {error}") from None
    for a, b in itertools.combinations(family.mutations, 2):
        try:
            apply_mutation(apply_mutation(original_mechanism(family), a), b)
        except FamilyError as error:
            raise read.error("mutations", str(error)) from None


# ------------------------------------------------------------------ merging mutations


def original_mechanism(family: Family) -> Mechanism:
    """The Original's mechanism."""
    return family.relations


def apply_mutation(mechanism: Mechanism, mutation: Mutation) -> Mechanism:
    """``mechanism`` with ``mutation``'s edits applied; raises ``FamilyError`` on a conflict.

    The result does not depend on the order in which mutations are applied: agreeing
    edits are kept once and everything is ordered by origin, never by arrival.
    """
    relations = {r.id: r for r in mechanism}
    for edit in mutation.edits:
        where = f"mutation {mutation.index} ({edit.kind} {edit.target})"
        if edit.kind == "add_relation":
            existing = relations.get(edit.target)
            if existing is not None and _content(existing) != _content(edit.relation):
                raise FamilyError(f"{where} conflicts with mutation {existing.origin}, which defines it differently")
            if existing is None or edit.relation.origin < existing.origin:
                relations[edit.target] = edit.relation
            continue
        relation = relations[edit.target]
        note = (mutation.index, edit.note)
        if edit.kind == "replace":
            if relation.replaced_by and (relation.equation, relation.description) != (edit.equation, edit.note):
                raise FamilyError(f"{where} conflicts with mutation {relation.replaced_by}, which replaces it too")
            replaced_by = min(filter(None, (relation.replaced_by, mutation.index)))
            relations[edit.target] = replace(relation, equation=edit.equation, notes=((replaced_by, edit.note),),
                                             replaced_by=replaced_by)
            continue
        if edit.kind == "add_terms":
            left, right = _union(relation.left, edit.left, where), _union(relation.right, edit.right, where)
        else:  # replace_term
            terms = list(getattr(relation, edit.side))
            i = next(k for k, t in enumerate(terms) if t.id == edit.term)
            if terms[i].replaced_by and terms[i].expr != edit.expr:
                raise FamilyError(f"{where} conflicts with mutation {terms[i].replaced_by}, which replaces it too")
            terms[i] = replace(terms[i], expr=edit.expr,
                               replaced_by=min(filter(None, (terms[i].replaced_by, mutation.index))))
            left, right = (tuple(terms), relation.right) if edit.side == "left" else (relation.left, tuple(terms))
        relations[edit.target] = replace(relation, left=left, right=right,
                                         notes=tuple(sorted(set(relation.notes) | {note})))
    return tuple(sorted(relations.values(), key=lambda r: r.origin))


def _content(relation: Relation) -> tuple:
    return relation.probe, relation.equation, relation.description, _exprs(relation.left), _exprs(relation.right)


def _exprs(terms: tuple[Term, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((t.id, t.expr) for t in terms)


def _union(terms: tuple[Term, ...], new: tuple[Term, ...], where: str) -> tuple[Term, ...]:
    """The union of two term lists, each term once, original terms first then by origin."""
    merged = {t.id: t for t in terms}
    for term in new:
        old = merged.get(term.id)
        if old is not None and old.expr != term.expr:
            raise FamilyError(f"{where}: term '{term.id}' conflicts with another definition of it")
        if old is None or (old.origin and term.origin < old.origin):
            merged[term.id] = term
    return tuple(sorted(merged.values(), key=lambda t: t.origin))


def _sum_text(terms: tuple[Term, ...]) -> str:
    text = ""
    for term in terms:
        expr = parse_expression(term.expr, allow_new_names=True)
        piece = f"({term.expr})" if expr.is_Add else term.expr
        if not text:
            text = piece
        elif piece.startswith("-") and not expr.is_Add:
            text += f" - {piece[1:]}"
        else:
            text += f" + {piece}"
    return text
