"""The store is hive-partitioned Parquet as pyarrow and Spark write it (the partition column
``family`` in the path only), so every standard reader opens it the standard way."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.storage import store
from solvers import solve
from tests.helpers.folders import copy_outputs
from tests.helpers.repository import ROOT
from tests.helpers.runs import run
from tests.helpers.store_rows import write_rows

EXACT = ["2383/560", "475/112"]


@pytest.fixture(scope="module")
def results(paper_outputs, tmp_path_factory):
    """The default study's store (one family, two rows)."""
    out = copy_outputs(paper_outputs, tmp_path_factory.mktemp("store") / "outputs")
    return out / "paper" / "results"


def check_frame(frame) -> None:
    """Every row, ``family`` present, the stored dtypes."""
    assert sorted(frame["expected_score_exact"]) == EXACT
    assert set(frame["family"].astype(str)) == {"card_guessing"}
    assert str(frame["expected_score"].dtype) == "float64"
    assert str(frame["n_states"].dtype) == "Int64" or str(frame["n_states"].dtype) == "int64"


def test_files_hold_no_partition_column(results):
    for path in store.result_files(results):
        assert "family" not in pq.read_schema(path).names


def test_pandas_reads_the_store(results):
    import pandas as pd

    check_frame(pd.read_parquet(results))


def test_a_pyarrow_dataset_reads_the_store(results):
    import pyarrow.dataset as ds

    table = ds.dataset(results, partitioning="hive").to_table()
    assert table.schema.field("expected_score").type == pa.float64()
    check_frame(table.to_pandas())


def test_duckdb_reads_the_store(results):
    import duckdb

    query = f"SELECT * FROM read_parquet('{results}/**/*.parquet', hive_partitioning = true)"
    check_frame(duckdb.sql(query).df())


def test_polars_reads_the_store(results):
    pl = pytest.importorskip("polars")
    frame = pl.scan_parquet(f"{results}/**/*.parquet", hive_partitioning=True).collect()
    assert sorted(frame["expected_score_exact"].to_list()) == EXACT
    assert set(frame["family"].to_list()) == {"card_guessing"}
    assert frame.schema["expected_score"] == pl.Float64


def mixed_store(tmp_path):
    """A store holding two families with different columns."""
    rows = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "optimal"})
    rows += solve({"family": "high_low", "n": 4, "strategy": "optimal"})
    for row in rows:
        row["task_id"], row["study"] = "t" + row["family"], "mixed"
    results = tmp_path / "results"
    write_rows(results, rows, {"study": "mixed"})
    return results


def test_a_study_mixing_families_reads_every_row_and_column(tmp_path):
    """The manual's recommended readers for mixed stores: load_results and DuckDB with
    union_by_name; no family's column is dropped."""
    import duckdb

    results = mixed_store(tmp_path)
    frame = store.load_results(results)
    sql = duckdb.sql(
        f"SELECT * FROM read_parquet('{results}/**/*.parquet', hive_partitioning = true, "
        "union_by_name = true)"
    ).df()
    for got in (frame, sql):
        assert sorted(got["family"].astype(str)) == ["card_guessing", "high_low"]
        assert {"expected_score", "n_states", "p_perfect", "n"} <= set(got.columns)
        high_low = got[got["family"].astype(str) == "high_low"]
        assert high_low["p_perfect"].notna().all()


def with_family_column(results) -> None:
    """Rewrite every file with a ``family`` column beside the folder's: a layout no guesslab
    writes (the partition column lives in the path only)."""
    for path in store.result_files(results):
        with pq.ParquetFile(path) as pf:
            table = pf.read()
        family = path.parent.name.split("=", 1)[1]
        odd = table.add_column(2, "family", pa.array([family] * table.num_rows, pa.string()))
        pq.write_table(odd.replace_schema_metadata(table.schema.metadata), path)


def test_a_file_holding_the_partition_column_is_quarantined_and_its_tasks_rerun(
    paper_outputs, tmp_path
):
    """Such a file is one of another schema: the next run moves it to quarantine/ with one
    line saying why (it is never rewritten or deleted) and computes its tasks again."""
    out = copy_outputs(paper_outputs, tmp_path / "out")
    results = out / "paper" / "results"
    odd = store.result_files(results)
    with_family_column(results)
    said: list[str] = []
    again = run(out, "cluster=sync", logged=said)
    assert (again.skipped, again.computed) == (0, 2)
    quarantine = out / "paper" / "quarantine" / "family=card_guessing"
    for path in odd:
        assert f"warning: {path} is not a guesslab results file (schema differs" in "\n".join(said)
        assert (quarantine / path.name).is_file()
    import pandas as pd

    check_frame(pd.read_parquet(results))


def usage_blocks(*needles: str) -> list[str]:
    """docs/usage.md's python blocks holding every one of ``needles``."""
    text = (ROOT / "docs" / "usage.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return [b for b in blocks if all(n in b for n in needles)]


@pytest.fixture(scope="module")
def mixed_study(tmp_path_factory) -> Path:
    """A folder holding outputs/paper made as docs/usage.md makes a study of two families:
    the default study, then ``python -m pipeline study=high_low study.name=paper``, each run
    in this process into ``outputs`` of the folder (the commands' default from there)."""
    folder = tmp_path_factory.mktemp("mixed")
    (line,) = re.findall(
        r"^(python -m pipeline study=high_low study.name=paper)\s",
        (ROOT / "docs" / "usage.md").read_text(),
        flags=re.M,
    )
    for args in [[], shlex.split(line)[3:]]:
        assert run(folder / "outputs", *args, "cluster=sync").errors == 0  # exit 0
    return folder


@pytest.mark.slow
def test_the_manuals_polars_read_of_a_mixed_study_has_every_row_and_column(
    mixed_study, monkeypatch, capsys
):
    pl = pytest.importorskip("polars")
    results = mixed_study / "outputs" / "paper" / "results"
    assert sorted(p.name for p in results.iterdir()) == ["family=card_guessing", "family=high_low"]
    every = duckdb_rows(results)
    # what the manual says of the whole-folder scan: refused, or every row and one schema
    glob = f"{results}/**/*.parquet"
    with pytest.raises(pl.exceptions.SchemaError, match="extra column"):
        pl.scan_parquet(glob, hive_partitioning=True).collect()
    loose = pl.scan_parquet(
        glob, hive_partitioning=True, missing_columns="insert", extra_columns="ignore"
    ).collect()
    assert len(loose) == len(every) and "p_perfect" not in loose.columns
    # the manual's block: every row and every column of both families
    (block,) = usage_blocks("import polars", "diagonal_relaxed")
    monkeypatch.chdir(mixed_study)
    scope: dict = {}
    exec(compile(block, "docs/usage.md", "exec"), scope)
    rows = scope["rows"]
    assert len(rows) == len(every) == 2 + 279  # paper's 2 tasks, high_low's 279
    assert {"expected_score", "expected_score_exact", "p_perfect", "n"} <= set(rows.columns)
    by_family = dict(rows.group_by("family").len().iter_rows())
    assert by_family == {"card_guessing": 2, "high_low": 279}
    high_low = rows.filter(pl.col("family") == "high_low")
    assert high_low["p_perfect"].null_count() == 0
    assert sorted(rows.filter(pl.col("family") == "card_guessing")["expected_score_exact"]) == EXACT
    printed = capsys.readouterr().out
    assert "card_guessing" in printed and "high_low" in printed
    # and the manual's DuckDB block on the same study
    (sql_block,) = usage_blocks("union_by_name")
    exec(compile(sql_block, "docs/usage.md", "exec"), {})
    assert "high_low" in capsys.readouterr().out


def duckdb_rows(results: Path):
    import duckdb

    return duckdb.sql(
        f"SELECT * FROM read_parquet('{results}/**/*.parquet', hive_partitioning = true, "
        "union_by_name = true)"
    ).df()


def test_family_folder_reads_with_plain_pandas_pyarrow_and_duckdb(outputs):
    run(outputs, "cluster=sync", "study.grid.deck=[[3,3,3],[2,2,2]]")
    folder = outputs / "paper" / "results" / "family=card_guessing"
    df = pd.read_parquet(folder)
    assert len(df) == 4
    import duckdb

    n = duckdb.sql(f"select count(*) from read_parquet('{folder}/*.parquet')").fetchall()[0][0]
    assert n == 4
    assert pq.ParquetDataset(folder).read().num_rows == 4
