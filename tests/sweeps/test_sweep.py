"""Sweep reading: four formats, one normalised row shape, streaming batches, clear errors."""
import json

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fastscore.sweeps import files as sweep_files
from fastscore.sweeps.read import COLUMNS, READ_ERROR, SweepError, read_sweep, run_index, sweep_digest

ROWS = [
    {"config": "gpt", "run": 0, "task": "fam/variant-1", "phenomenal": "y = 2*x", "mechanism": None,
     "probes": None, "wall_time": 1.5, "tokens": 120},
    {"config": "gpt", "run": 1, "task": "fam/variant-1", "phenomenal": None, "mechanism": "h = x\ny = 2*h",
     "probes": "h = x", "wall_time": 2.25, "tokens": 300},
    {"config": "claude", "run": 0, "task": "other", "phenomenal": None, "mechanism": "h = x\ny = h^2",
     "probes": "h = x\ng = 2", "wall_time": 0.5, "tokens": 7},
]
EXTRAS = ("wall_time", "tokens")


def write_parquet(path, rows):
    pl.DataFrame(rows).write_parquet(path)
    return path


def write_csv(path, rows):
    pl.DataFrame(rows).write_csv(path)
    return path


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_tree(root, rows):
    for row in rows:
        folder = root / row["config"] / (str(row["run"]) if row["run"] == 0 else f"run-{row['run']}") / row["task"]
        folder.mkdir(parents=True)
        text = row["phenomenal"] or row["mechanism"].replace("\n", " ; ")  # ';'-separated form
        (folder / "submission.txt").write_text(text + "\n", encoding="utf-8")
        if row["probes"]:
            (folder / "probes.txt").write_text(row["probes"] + "\n", encoding="utf-8")
    return root


WRITERS = {"parquet": write_parquet, "csv": write_csv, "jsonl": write_jsonl}


def make(kind, tmp_path, rows=ROWS):
    if kind == "tree":
        return write_tree(tmp_path / "SWEEP", rows)
    return WRITERS[kind](tmp_path / f"sweep.{kind}", rows)


def read_all(path, **options):
    return pl.concat(list(read_sweep(path, **options)), how="vertical_relaxed")


def keyed(frame):
    return sorted(frame.select(COLUMNS).rows())


EXPECTED = sorted(
    (r["config"], r["run"], r["task"], r["phenomenal"], r["mechanism"], r["probes"]) for r in ROWS)


@pytest.mark.parametrize("kind", ["parquet", "csv", "jsonl", "tree"])
def test_every_format_gives_the_same_normalised_rows(tmp_path, kind):
    frame = read_all(make(kind, tmp_path))
    assert keyed(frame) == EXPECTED
    assert frame.columns[:6] == list(COLUMNS)
    assert [frame.schema[name] for name in COLUMNS] == [pl.String, pl.Int64, pl.String,
                                                        pl.String, pl.String, pl.String]


@pytest.mark.parametrize("kind", ["parquet", "csv", "jsonl"])
def test_extra_columns_carried_through(tmp_path, kind):
    frame = read_all(make(kind, tmp_path))
    assert frame.columns == [*COLUMNS, *EXTRAS]
    assert frame.schema["wall_time"] == pl.Float64 and frame.schema["tokens"] == pl.Int64
    assert frame.select(["task", "run", *EXTRAS]).rows() == [
        (r["task"], r["run"], r["wall_time"], r["tokens"]) for r in ROWS]


def test_ndjson_suffix_reads_as_jsonl(tmp_path):
    path = write_jsonl(tmp_path / "sweep.ndjson", ROWS)
    assert keyed(read_all(path)) == EXPECTED


@pytest.mark.parametrize("kind", ["parquet", "csv", "jsonl"])
def test_run_defaults_to_zero(tmp_path, kind):
    rows = [{k: v for k, v in row.items() if k != "run"} for row in ROWS]
    frame = read_all(make(kind, tmp_path, rows))
    assert frame.schema["run"] == pl.Int64 and frame["run"].to_list() == [0, 0, 0]


def test_missing_run_values_are_zero_and_labels_give_their_index(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("config,task,run\na,t,\na,t,run-2\na,t,run3\na,t,7\n", encoding="utf-8")
    assert read_all(path)["run"].to_list() == [0, 2, 3, 7]
    path.write_text("config,task,run\na,t,1.5\n", encoding="utf-8")
    with pytest.raises(SweepError, match="column run holds '1.5', not a run index"):
        read_all(path)
    write_jsonl(tmp_path / "s.jsonl", [{"config": "a", "task": "t", "run": 2.0}, {"config": "a", "task": "t"}])
    assert read_all(tmp_path / "s.jsonl")["run"].to_list() == [2, 0]


def test_run_index_rule():
    assert [run_index(label) for label in ("0", "1", "run-2", "run3", "r_12", " 4 ")] == [0, 1, 2, 3, 12, 4]
    assert [run_index(label) for label in ("notes", "1.0", "run-", "2a", "-1")] == [None] * 5


def test_probes_mapping_becomes_sorted_json_text(tmp_path):
    rows = [{"config": "a", "task": "t", "probes": {"z": "z = 1", "cm": "cm = x/2"}},
            {"config": "a", "task": "u", "probes": {"cm": None, "q": "q = 3"}},
            {"config": "a", "task": "v", "probes": "cm = x"}]
    frame = read_all(write_jsonl(tmp_path / "s.jsonl", rows))
    assert frame["probes"].to_list() == ['{"cm": "cm = x/2", "z": "z = 1"}', '{"q": "q = 3"}', "cm = x"]
    assert json.loads(frame["probes"][0]) == rows[0]["probes"]


def test_probes_as_parquet_map_and_struct(tmp_path):
    answers = [[("z", "z = 1"), ("cm", "cm = x/2")], None]
    table = pa.table({"config": ["a", "a"], "task": ["t", "u"],
                      "probes": pa.array(answers, type=pa.map_(pa.string(), pa.string()))})
    pq.write_table(table, tmp_path / "map.parquet")
    assert read_all(tmp_path / "map.parquet")["probes"].to_list() == ['{"cm": "cm = x/2", "z": "z = 1"}', None]
    pl.DataFrame({"config": ["a"], "task": ["t"], "probes": [{"z": "z = 1", "cm": "cm = x/2"}]}).write_parquet(
        tmp_path / "struct.parquet")
    assert read_all(tmp_path / "struct.parquet")["probes"].to_list() == ['{"cm": "cm = x/2", "z": "z = 1"}']


def test_mechanism_list_and_blank_text(tmp_path):
    rows = [{"config": "a", "task": "t", "mechanism": ["h = x", "y = 2*h"], "phenomenal": "  "},
            {"config": "a", "task": "u", "mechanism": "", "phenomenal": "y = x"}]
    frame = read_all(write_jsonl(tmp_path / "s.jsonl", rows))
    assert frame.select("mechanism", "phenomenal").rows() == [("h = x\ny = 2*h", None), (None, "y = x")]


def test_tree_details(tmp_path):
    root = tmp_path / "SWEEP"
    single = root / "cfg" / "run3" / "fam" / "variant-2"
    single.mkdir(parents=True)
    (single / "submission.txt").write_text("\n  y = a*x  \n\n", encoding="utf-8")
    probes_only = root / "cfg" / "run3" / "solo"
    probes_only.mkdir()
    (probes_only / "probes.txt").write_text("h = x\n", encoding="utf-8")
    (root / "cfg" / ".hidden" / "t").mkdir(parents=True)
    (root / "cfg" / ".hidden" / "t" / "submission.txt").write_text("y = 1")
    (root / "README.md").write_text("notes")
    frame = read_all(root)
    assert frame.columns == [*COLUMNS, READ_ERROR]  # why a file was not read: null, both read
    assert frame.rows() == [("cfg", 3, "fam/variant-2", "y = a*x", None, None, None),
                            ("cfg", 3, "solo", None, None, "h = x", None)]
    (root / "cfg" / "0" / "submission.txt").parent.mkdir(parents=True)
    (root / "cfg" / "0" / "submission.txt").write_text("y = x")
    with pytest.raises(SweepError, match="must sit in a task folder below the run folder"):
        read_all(root)
    (root / "cfg" / "0" / "submission.txt").unlink()
    (root / "cfg" / "notes" / "t").mkdir(parents=True)
    with pytest.raises(SweepError, match="run folder name has no run index"):
        read_all(root)


@pytest.mark.parametrize("kind", ["parquet", "csv", "jsonl", "tree"])
def test_batches_of_the_requested_size(tmp_path, kind):
    rows = [dict(ROWS[0], task=f"t{i}") for i in range(5)]
    batches = list(read_sweep(make(kind, tmp_path, rows), batch_size=2))
    assert [batch.height for batch in batches] == [2, 2, 1]
    assert sorted(pl.concat(batches)["task"].to_list()) == [f"t{i}" for i in range(5)]


def test_parquet_streams_row_groups(tmp_path):
    rows = [dict(ROWS[1], task=f"t{i:03d}") for i in range(250)]
    path = tmp_path / "big.parquet"
    pl.DataFrame(rows).write_parquet(path, row_group_size=40)
    batches = read_sweep(path, batch_size=100)
    first = next(batches)
    assert first["task"].to_list() == [f"t{i:03d}" for i in range(100)]
    assert [b.height for b in batches] == [100, 50]


def test_csv_column_empty_in_first_block_is_read_as_text(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_files, "_CSV_BLOCK", 256)
    lines = ["config,task,note"] + [f"a,t{i}," for i in range(40)] + [f"a,t{i},{i}" for i in range(40, 45)]
    path = tmp_path / "s.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = read_all(path)
    assert frame.height == 45 and frame["note"].to_list()[-2:] == ["43", "44"]


# --- errors --------------------------------------------------------------------------------

def test_missing_path(tmp_path):
    with pytest.raises(SweepError, match="sweep not found"):
        read_sweep(tmp_path / "nope.parquet")
    with pytest.raises(SweepError, match="sweep not found"):
        sweep_digest(tmp_path / "nope.parquet")


def test_unknown_format(tmp_path):
    path = tmp_path / "sweep.xlsx"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(SweepError, match=r"unknown sweep format '\.xlsx'; expected \.parquet, \.csv"):
        read_sweep(path)


@pytest.mark.parametrize("kind", ["parquet", "csv", "jsonl"])
def test_missing_task_column(tmp_path, kind):
    rows = [{k: v for k, v in row.items() if k != "task"} for row in ROWS]
    with pytest.raises(SweepError, match="missing required column\\(s\\) task"):
        read_all(make(kind, tmp_path, rows))


def test_csv_without_task_column_fails_on_the_call(tmp_path):
    path = write_csv(tmp_path / "s.csv", [{"config": "a", "phenomenal": "y = x"}])
    with pytest.raises(SweepError, match="s.csv: missing required column\\(s\\) task"):
        read_sweep(path)


@pytest.mark.parametrize("name, content", [("s.csv", ""), ("s.jsonl", ""), ("s.jsonl", "\n\n"),
                                           ("s.csv", "config,task\n")])
def test_empty_sweeps(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SweepError, match="empty sweep"):
        read_all(path)


def test_empty_parquet_and_empty_tree(tmp_path):
    pl.DataFrame({"config": [], "task": []}, schema={"config": pl.String, "task": pl.String}).write_parquet(
        tmp_path / "s.parquet")
    with pytest.raises(SweepError, match="empty sweep"):
        read_all(tmp_path / "s.parquet")
    (tmp_path / "SWEEP" / "cfg" / "0").mkdir(parents=True)
    with pytest.raises(SweepError, match="empty sweep"):
        read_all(tmp_path / "SWEEP")


def test_corrupt_inputs(tmp_path):
    (tmp_path / "s.parquet").write_bytes(b"not parquet")
    with pytest.raises(SweepError, match="not a readable Parquet file"):
        read_sweep(tmp_path / "s.parquet")
    (tmp_path / "s.jsonl").write_text('{"config": "a", "task": "t"}\n{oops\n', encoding="utf-8")
    with pytest.raises(SweepError, match=r"s\.jsonl:2: invalid JSON"):
        read_all(tmp_path / "s.jsonl")
    (tmp_path / "s.jsonl").write_text('["a", "t"]\n', encoding="utf-8")
    with pytest.raises(SweepError, match=r"s\.jsonl:1: expected a JSON object, got list"):
        read_all(tmp_path / "s.jsonl")


# --- digest ------------------------------------------------------------------------------------

def test_digest_of_file_and_tree(tmp_path):
    import hashlib

    path = write_jsonl(tmp_path / "s.jsonl", ROWS)
    assert sweep_digest(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    root = write_tree(tmp_path / "SWEEP", ROWS)
    digest = sweep_digest(root)
    assert digest == sweep_digest(root) and len(digest) == 64
    submission = root / "gpt" / "0" / "fam" / "variant-1" / "submission.txt"
    submission.write_text("y = 3*x\n", encoding="utf-8")
    changed = sweep_digest(root)
    assert changed != digest
    submission.rename(submission.with_name("other.txt"))
    assert sweep_digest(root) not in (digest, changed)
