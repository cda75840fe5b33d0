"""EvoSCM's submission shapes read down to the one SCM hypothesis a GRN attempt is scored on.

EvoSCM's agents keep several competing SCM hypotheses: an ``<scm_update>`` object whose
``candidates`` are hypotheses (``id``, ``confidence``, ``variables``, ``edges``,
``mechanisms``, ``parameters``, ...), and a final ``<scm_final>`` object naming the chosen
one, ``"selected_candidate_id"``.  Accepted (``submission_data``, ``hypothesis``):

- one hypothesis object (``variables`` / ``edges`` / ``mechanisms`` at the top): itself;
- an update object ``{"candidates": [...], ...}``, with or without a top-level
  ``selected_candidate_id``;
- both objects in one: ``{"scm_update": {...}, "scm_final": {...}}`` (the final object
  may also be ``final_claim``, the name EvoSCM's saved run record gives it, whose
  ``candidates`` are then at the top);
- an agent's reply text with ``<scm_update>...</scm_update>`` and optionally
  ``<scm_final>...</scm_final>``: the JSON in the first of each tag (tag names in any
  case), read as the object above.

The selected candidate: the one ``selected_candidate_id`` names (the final object's,
else the top level's; trimmed, as EvoSCM reads it; an empty one is no selection; two
different selections, or one naming no candidate, are bad input with the reason).
Without a selection: the single candidate; else, among the candidates whose ``status``
is ``active`` (EvoSCM's default), the highest ``confidence`` as EvoSCM reads it (a
number clamped to [1e-9, 1]; missing or not a finite number: 1), ties the first.
Candidates are read as EvoSCM's runtime reads them: one that is not an object or has no
``id`` is skipped; a second candidate with an ``id`` replaces the first (in its place).
``patches`` are not applied (EvoSCM applies them against its own run's evidence, which
a submission does not carry): a candidate is scored as written, and one retired only
by a ``retire_candidate`` patch can still be chosen.

Parameters (``parameter_values``): ``parameters`` maps a name to ``{"estimate": number,
...}`` (EvoSCM's shape; ``lower`` / ``upper`` are not used) or to a bare number; a
variable with ``role`` ``parameter`` is a parameter too.  A finite numeric estimate is
the parameter's value; otherwise the reason it has none.

This module owns these readings only (plain Python: no SymEngine); ``grn`` scores the
graph of the hypothesis and ``scm`` its equations.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from fastscore.benchmarks.base import BadInput

__all__ = ["hypothesis", "parameter_names", "parameter_values", "submission_data"]

_TAGS = ("scm_update", "scm_final")
_TAG = {tag: re.compile(rf"<{tag}>\s*(.*?)\s*</{tag}>", re.S | re.I) for tag in _TAGS}
_ANY_TAG = re.compile(r"<scm_(?:update|final)>", re.I)
_FINAL_KEYS = ("scm_final", "final_claim")
_WRAPPERS = frozenset({"candidates", "scm_update", *_FINAL_KEYS})
_LOWEST_CONFIDENCE = 1e-9


def _loads(text: str, where: str = ""):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{where}not JSON: {str(error)[:80]}") from None


def submission_data(text: str):
    """The JSON of a submission (an object or a list), the tagged reply text read as
    ``{"scm_update": ..., "scm_final": ...}``, or None for any other text (an edge list);
    raises ``BadInput`` for JSON that does not read."""
    if text.lstrip()[:1] in ("{", "["):
        return _loads(text)
    if "<" not in text or _ANY_TAG.search(text) is None:
        return None
    data = {}
    for tag in _TAGS:
        found = _TAG[tag].search(text)
        if found is not None:
            data[tag] = _loads(found.group(1), f"<{tag}>: ")
    if "scm_update" not in data:
        raise BadInput("a reply with <scm_final> needs an <scm_update> with the candidates")
    return data


def _confidence(value) -> float:
    """EvoSCM's reading of a candidate's ``confidence``."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 1.0
    return min(max(number, _LOWEST_CONFIDENCE), 1.0) if math.isfinite(number) else 1.0


def _selection(*places) -> str | None:
    chosen = []
    for where in places:
        if isinstance(where, Mapping) and where.get("selected_candidate_id") is not None:
            chosen.append(str(where["selected_candidate_id"]).strip())
    chosen = [name for name in chosen if name]
    if len(set(chosen)) > 1:
        raise BadInput(f"two different selections: {chosen[0][:40]!r} and {chosen[1][:40]!r}")
    return chosen[0] if chosen else None


def hypothesis(data: Mapping) -> Mapping:
    """The one hypothesis of a JSON submission object (module doc): ``data`` itself, or
    its selected candidate; raises ``BadInput`` with the reason."""
    if _WRAPPERS.isdisjoint(data):
        return data  # one hypothesis (the common case: nothing to look up)
    update = data.get("scm_update")
    final = next((data[key] for key in _FINAL_KEYS if key in data), None)
    if "candidates" in data:
        update = data
    elif update is None:
        if final is not None:
            raise BadInput("a final object (scm_final) needs the candidates: an scm_update or 'candidates'")
        return data  # one hypothesis
    if not isinstance(update, Mapping):
        raise BadInput("scm_update: expected an object with 'candidates'")
    if final is not None and not isinstance(final, Mapping):
        raise BadInput("scm_final: expected an object")
    items = update.get("candidates")
    if not isinstance(items, list):
        raise BadInput("candidates: expected a list of hypotheses")
    candidates: dict[str, Mapping] = {}
    for item in items:
        if isinstance(item, Mapping) and str(item.get("id") or "").strip():
            candidates[str(item["id"]).strip()] = item
    if not candidates:
        raise BadInput("candidates: no candidate with an 'id'")
    selected = _selection(final, data, update)
    if selected is not None:
        if selected not in candidates:
            names = ", ".join(list(candidates)[:6])
            raise BadInput(f"selected_candidate_id {selected[:40]!r} names no candidate (candidates: {names[:120]})")
        return candidates[selected]
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    active = [c for c in candidates.values() if str(c.get("status") or "active") == "active"]
    if not active:
        raise BadInput("no selected_candidate_id and no candidate with status 'active'")
    return max(active, key=lambda c: _confidence(c.get("confidence")))  # max keeps the first of ties


def parameter_names(data: Mapping) -> set:
    """The names of a hypothesis's parameters: the keys of ``parameters`` and the
    variables with ``role`` ``parameter``."""
    names = set()
    parameters = data.get("parameters")
    if isinstance(parameters, Mapping):
        names.update(name for name in parameters if isinstance(name, str))
    variables = data.get("variables") or ()
    if isinstance(variables, Mapping):
        variables = [{"name": k, **(v if isinstance(v, Mapping) else {})} for k, v in variables.items()]
    for variable in variables if isinstance(variables, list) else ():
        if isinstance(variable, Mapping) and str(variable.get("role", "")).strip().lower() == "parameter" \
                and isinstance(variable.get("name"), str):
            names.add(variable["name"])
    return names


def parameter_values(data: Mapping) -> tuple[dict[str, float], dict[str, str]]:
    """(name -> value, name -> why it has none) of a hypothesis's parameters (module doc)."""
    values: dict[str, float] = {}
    reasons: dict[str, str] = {}
    parameters = data.get("parameters")
    parameters = parameters if isinstance(parameters, Mapping) else {}
    for name in sorted(parameter_names(data)):
        if name not in parameters:
            reasons[name] = "it has no entry in 'parameters'"
            continue
        entry = parameters[name]
        if isinstance(entry, Mapping):
            if "estimate" not in entry:
                reasons[name] = "it has no 'estimate'"
                continue
            entry = entry["estimate"]
        if isinstance(entry, bool) or not isinstance(entry, (int, float)):
            reasons[name] = f"its estimate {str(entry)[:30]!r} is not a number"
            continue
        try:
            value = float(entry)
        except OverflowError:
            value = math.inf
        if math.isfinite(value):
            values[name] = value
        else:
            reasons[name] = f"its estimate {str(entry)[:30]} is not a finite number"
    return values, reasons
