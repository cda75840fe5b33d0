"""``fastscore graph``: DOT text, the layered layout, and the command writing DOT, SVG
and PNG for a reference and for a submission from a sweep."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastscore.cli import main
from fastscore.problems.formats import load_problems
from fastscore.report.task_graph import reference_graph
from fastscore.structure.drawing import layers, layout, to_dot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "problems" / "example"
SWEEP = ROOT / "problems" / "example-sweep.jsonl"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _problem(task: str):
    return next(p for p in load_problems(EXAMPLE) if p.task_id == task)


def test_dot_marks_roles_the_coupled_block_and_its_edges():
    dot = to_dot(reference_graph(_problem("michaelis-menten-rate")).graph, title="MM")
    assert dot.startswith("digraph mechanism {") and dot.rstrip().endswith("}")
    assert 'label="implicit block"' in dot and "subgraph cluster_" in dot
    assert '"E_T" [label="E_T", fillcolor="#9ecae1"]' in dot  # an input
    assert '"v" [label="v", fillcolor="#fc9272"]' in dot  # the target
    assert '"r_cat" -> "v";' in dot  # an explicit step
    assert '"r_on" -> "r_off" [style=dashed' in dot  # inside the coupled block
    assert 'label="MM"' in dot


def test_layers_put_knowns_on_top_and_each_step_below_what_it_uses():
    graph = reference_graph(_problem("circular-orbit-period")).graph
    layer = layers(graph)
    assert {layer[n] for n in ("r", "M", "m", "G")} == {0}
    assert layer["F_g"] == 1 and layer["F_c"] == 2 and layer["v"] == 3 and layer["T"] == 4
    xy = layout(graph)
    assert set(xy) == set(graph.roles) and xy["T"][1] < xy["v"][1] < xy["r"][1]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".dot", ".svg", ".png"])
def test_the_command_draws_a_reference(tmp_path, suffix, capsys):
    out = tmp_path / f"mm{suffix}"
    assert main(["graph", "--problems", str(EXAMPLE), "--task", "michaelis-menten-rate", "--out", str(out),
                 "--engine", "matplotlib"]) == 0
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(PNG_SIGNATURE)
    elif suffix == ".svg":
        assert b"<svg" in data[:1000]
    else:
        assert data.startswith(b"digraph")
    assert f"wrote {out}" in capsys.readouterr().out


@pytest.mark.slow
def test_a_submission_is_drawn_with_its_value_matches(tmp_path):
    sweep = tmp_path / "sweep.jsonl"
    mechanism = "vac = exp(-(Ef + p*Omega)/(kB*T)); mob = vac; Eb = 2*Em; r = nu*exp(-Eb/(kB*T)); D = a**2*mob*r/6"
    sweep.write_text(json.dumps({"config": "m", "run": 1, "task": "vacancy-diffusion-original",
                                 "mechanism": mechanism}) + "\n")
    out = tmp_path / "sub.dot"
    assert main(["graph", "--problems", str(EXAMPLE), "--task", "vacancy-diffusion-original", "--sweep", str(sweep),
                 "--config", "m", "--run", "1", "--out", str(out)]) == 0
    dot = out.read_text()
    # vac equals both cv and cm of the reference, mob too; Eb and r are wrong
    assert '"vac" [label="vac\\n= cm, cv"' in dot and '"mob" [label="mob\\n= cm, cv"' in dot
    assert '"Eb" [label="Eb",' in dot and dot.count("penwidth=3") == 2
    assert "graph 1.00" in dot and "recovered 2/4" in dot
    png = tmp_path / "sub.png"
    assert main(["graph", "--problems", str(EXAMPLE), "--task", "vacancy-diffusion-original", "--sweep", str(sweep),
                 "--config", "m", "--run", "1", "--out", str(png), "--engine", "matplotlib"]) == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)


def test_a_phenomenal_submission_is_drawn_as_one_equation(tmp_path):
    out = tmp_path / "law.dot"
    assert main(["graph", "--problems", str(EXAMPLE), "--task", "circular-orbit-period", "--sweep", str(SWEEP),
                 "--config", "oracle", "--out", str(out)]) == 0
    dot = out.read_text()
    assert '"r" -> "T";' in dot and '"M" -> "T";' in dot and "internal" not in dot


@pytest.mark.parametrize("arguments, message", [
    (["--task", "no-such-task", "--out", "x.dot"], "no task 'no-such-task'"),
    (["--task", "michaelis-menten-rate", "--out", "x.pdf"], "unknown graph format .pdf"),
    (["--task", "michaelis-menten-rate", "--sweep", str(SWEEP), "--out", "x.dot"], "--sweep needs --config"),
    (["--task", "michaelis-menten-rate", "--sweep", str(SWEEP), "--config", "nobody", "--out", "x.dot"],
     "no submission for config 'nobody'"),
])
def test_unusable_input_is_exit_2_with_one_line(tmp_path, capsys, arguments, message):
    arguments = [str(tmp_path / a) if a.startswith("x.") else a for a in arguments]
    assert main(["graph", "--problems", str(EXAMPLE), *arguments]) == 2
    error = capsys.readouterr().err
    assert error.startswith("fastscore graph: error:") and message in error and error.count("\n") == 1
