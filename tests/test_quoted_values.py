"""The numbers the manual quotes through docs/data (docs/quoted.py): each read from its one
data file, never also typed out on a page, and each data file true to what it was taken from."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest

from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


@pytest.fixture(scope="module")
def quoted():
    """docs/quoted.py, as the manual's build imports it (docs/hooks.py)."""
    from docs import quoted

    return quoted


def test_every_quote_on_every_page_names_a_value(quoted):
    """Every ``{{ FILE.KEY.FIELD }}`` of every page resolves to a value of its data file (the
    build fails on one that does not), and the manual quotes through them."""
    used = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        quoted.expand_quotes(text, str(page.relative_to(DOCS)))
        used += quoted.quotes(text)
    assert len(used) >= 20


def test_a_quote_of_a_missing_value_names_the_quote_and_what_exists(quoted):
    """A quote of an unknown file, row or field is refused with the quote and the keys the
    data file has."""
    with pytest.raises(quoted.QuoteError, match=r"no data file docs/data/no_such_file"):
        quoted.expand_quotes("x {{ no_such_file.a.b }}", "p.md")
    with pytest.raises(quoted.QuoteError, match=r"greedy_pair.*persistent"):
        quoted.expand_quotes("{{ ranks52_monte_carlo.greedy_both.expected_score }}", "p.md")
    with pytest.raises(quoted.QuoteError, match=r"p\.md"):
        quoted.expand_quotes("{{ ranks52_monte_carlo.persistent.no_column:.4f }}", "p.md")


def significant(text: str) -> bool:
    """Whether a rendered number is specific enough that typing it out is a second source:
    three or more decimals, or four or more significant digits (a round setting such as
    100,000 games is not)."""
    digits = re.sub(r"\D", "", text).strip("0")
    decimals = text.split(".")[1] if "." in text else ""
    return len(re.sub(r"\D", "", decimals)) >= 3 or len(digits) >= 4


def test_a_quoted_value_is_typed_out_nowhere_else(quoted):
    """A value some page quotes from docs/data appears, as rendered, on no other page outside a
    quote: the data file is its one source (the README, which no hook renders, is held to the
    data by the next test)."""
    rendered = set()
    texts = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        rendered |= {value for _, value in quoted.quotes(text) if significant(value)}
        texts[str(page.relative_to(DOCS))] = quoted.QUOTE.sub("", text)
    typed = [
        (name, value)
        for value in sorted(rendered)
        for name, text in texts.items()
        if re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text)
    ]
    assert not typed, typed


def test_the_monte_carlo_rows_of_the_ranks_page_are_the_ranks52_study_s_tasks():
    """docs/data/ranks52_monte_carlo.csv holds one row per Monte Carlo task of the study
    ``ranks52`` (its task ids, games and tie rules), each with its standard error."""
    from omegaconf import OmegaConf

    from pipeline.running.plan import planned
    from tests.helpers.runs import compose_config

    study = OmegaConf.to_container(compose_config("study=ranks52").study, resolve=True)
    plan = planned(study)
    tasks = {
        tid: task
        for grid in plan.grids
        for tid, task in grid.tasks(0, len(grid))
        if task.get("method") == "monte_carlo"
    }
    with (DOCS / "data" / "ranks52_monte_carlo.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {row["task_id"] for row in rows} == set(tasks)
    for row in rows:
        task = tasks[row["task_id"]]
        assert int(row["n_games"]) == task["n_games"]
        assert row["strategy"] == task["strategy"]
        assert (row["tie_break"] or None) == task.get("tie_break")
        assert float(row["std_error"]) ** 2 * int(row["n_games"]) == pytest.approx(
            float(row["score_variance"]), rel=1e-4
        )


def test_the_rows_script_writes_the_file_the_pages_quote(tmp_path: Path):
    """scripts/quoted_rows.py turns a study's stored rows into the data file: its keys are the
    strategies with their tie rules."""
    import importlib.util

    import pandas as pd

    spec = importlib.util.spec_from_file_location("quoted_rows", ROOT / "scripts/quoted_rows.py")
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # its dataclasses look their module up
    spec.loader.exec_module(script)
    stored = pd.read_csv(DOCS / "data" / "ranks52_monte_carlo.csv").drop(columns="key")
    stored["method"], stored["status"] = "monte_carlo", "ok"
    folder = tmp_path / "ranks52" / "results"
    folder.mkdir(parents=True)
    stored.to_parquet(folder / "part.parquet")
    table = script.rows_file("ranks52_monte_carlo", tmp_path)
    assert list(table["key"]) == ["greedy_lowest", "greedy_pair", "persistent"]
    assert list(table["expected_score"]) == sorted(stored["expected_score"])


def test_the_ranks_page_s_extrapolation_is_what_its_data_file_gives():
    """The ranks page's steps, fits at n = 13 and the figure caption's ranges are computed
    from docs/data/ranks_4_cards.csv by the summary's own fits (solvers/card_guessing/summary/
    ranks52.py), to the digits the page shows."""
    import numpy as np
    import pandas as pd

    from solvers.card_guessing.summary import ranks52

    rows = pd.read_csv(DOCS / "data" / "ranks_4_cards.csv", dtype={"deck": str})
    label = rows["strategy"] + rows["tie_break"].fillna("").map(lambda t: f"_{t}" if t else "")
    table = rows.assign(label=label).pivot_table(
        index="n", columns="label", values="expected_score"
    )
    table = table.reset_index()
    page = (DOCS / "games" / "card_guessing_ranks52.md").read_text(encoding="utf-8")
    steps = np.diff(table["optimal"].to_numpy())
    shown = ", ".join(f"{x:.5f}" for x in steps[-4:])
    assert f"from n = 7 to 11 shrink ({shown})" in page
    assert f"from 6 to 7, is smaller ({steps[-5]:.5f})" in page
    assert np.all(np.diff(np.abs(steps[-4:])) < 0) and abs(steps[-5]) < abs(steps[-4])
    optimum, greedy = (ranks52.fits_at_full(table, c) for c in ("optimal", "greedy_pair"))
    for name, fits in (("optimum", optimum), ("greedy", greedy)):
        low, high = fits["low"], fits["high"]
        alone = sorted((fits["line"], fits["quadratic"], fits["steps"]))
        assert f"{low:.3f} to {high:.3f} (" in page, name
        assert f"{alone[0]:.4f} to {alone[-1]:.4f}" in page, name
    line = f"| {optimum['line']:.4f} +- {optimum['line_se']:.4f} | {greedy['line']:.4f} +- "
    assert line in page
    assert f"| {optimum['quadratic']:.4f} +- {optimum['quadratic_se']:.4f} |" in page
    assert f"| {optimum['steps']:.4f} | {greedy['steps']:.4f} |" in page
    alone = (optimum["line"], optimum["quadratic"], optimum["steps"])
    middle, half = (max(alone) + min(alone)) / 2, (max(alone) - min(alone)) / 2
    assert f"({middle:.3f} +- {half:.3f}, their\nmidpoint and half-range)" in page


def test_the_readme_s_results_are_the_results_file_s(quoted):
    """The results the README quotes are docs/data/results.yaml's, at the digits shown (a
    float to the digits its check supports)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = {
        "suits52": "{{ results.suits52.value:checked }}",
        "ranks_11": "{{ results.ranks_11.value:checked }}",
        "mastermind_4x7": "{{ results.mastermind_4x7.value }} on 4 x 7",
        "high_low_13x4": "({{ results.high_low_13x4.value:.2e }} with ties lose)",
    }
    for key, quote in shown.items():
        text = quoted.expand_quotes(quote).replace("e-08", "e-8")
        assert text in readme, (key, text)


def test_every_result_is_true_to_its_source(quoted):
    """Each value of docs/data/results.yaml agrees with what it came from: the exact
    complete-feedback value recomputed; the 10- and 11-type optima with the ranks data file;
    the 4 x 7 total with its histogram on the Mastermind page; each entry complete."""
    from fractions import Fraction

    import pandas as pd

    from solvers.card_guessing.exact.complete_feedback import expected_score

    results = quoted.data_file("results")
    for key, entry in results.items():
        assert {"title", "value", "how", "checked", "command", "cost", "page"} <= set(entry), key
        page = entry["page"].split("#")[0]
        assert (DOCS / page).is_file(), (key, page)
    assert Fraction(results["suits52_complete"]["value"]) == expected_score((13, 13, 13, 13))
    ranks = pd.read_csv(DOCS / "data" / "ranks_4_cards.csv", dtype={"deck": str})
    optimum = ranks[ranks["strategy"] == "optimal"].set_index("n")["expected_score"]
    for n in (10, 11):
        assert abs(results[f"ranks_{n}"]["value"] - optimum[n]) < 5e-13
    page = (DOCS / "games" / "mastermind_optimal.md").read_text(encoding="utf-8")
    row = re.search(r"^\| 1123 \|.*?\| ([\d, ]+) \| [\d,]+ \|$", page, re.M)
    histogram = [int(x) for x in row.group(1).split(",")]
    assert sum(histogram) == 7**4
    assert sum(k * h for k, h in enumerate(histogram, 1)) == results["mastermind_4x7"]["value"]


def test_the_rank_counts_the_manual_types_are_the_code_s():
    """The ranks of n types of 4 cards that the cost tables show are what the ranked solver's
    layers hold (solvers/card_guessing/uniform_deck/ranks.py)."""
    from solvers.card_guessing.uniform_deck.ranks import layer_sizes

    pages = [DOCS / "benchmarks.md", DOCS / "games" / "card_guessing_ranks52.md"]
    for n in (8, 9, 10, 11):
        ranks = f"{sum(layer_sizes([4] * n)):,}"
        for page in pages:
            assert f"| {ranks} |" in page.read_text(encoding="utf-8"), (page.name, n)


def test_the_start_up_table_s_ratios_are_its_own_times(quoted):
    """docs/data/startup.yaml (benchmarks/bench_startup.py): each ratio the faults-and-load page
    quotes is the file's own wall times divided, to the file's rounding, and the loop is the
    unit of its own row."""
    table = quoted.data_file("startup")
    default = table["default_study"]
    assert default["ratio"] == pytest.approx(default["local_s"] / default["sync_s"], abs=1e-3)
    sizes = [key for key in table if key.startswith("tasks_")]
    assert sizes, table
    for size in sizes:
        loop = table[size]["loop"]["wall_s"]
        assert table[size]["loop"]["vs_loop"] == 1.0
        for name, row in table[size].items():
            if name == "rounds":
                continue
            assert row["vs_loop"] == pytest.approx(row["wall_s"] / loop, abs=1e-3), (size, name)


def test_the_search_table_s_ratios_are_its_own_times(quoted):
    """docs/data/search_bench.yaml (benchmarks/bench_search.py): each ratio the benchmarks
    page quotes is the file's own times divided, to the file's rounding, whole runs and a
    trial at the margin alike; the one run's timeline the page gives is in the order its
    lines appeared, and its asks held the driver's lock longer than they take alone (what
    the page says sets the pace)."""
    table = quoted.data_file("search_bench")
    sizes = [key for key in table if key.startswith("jobs_")]
    assert sizes, table
    for size in sizes:
        runs, margin = table[size], table[size]["marginal"]
        for name in ("loop", "sync", "local"):
            ratio = runs[name]["wall_s"] / runs["loop"]["wall_s"]
            # the times are kept to 0.1 s, the ratios to 0.01 of the unrounded times
            assert runs[name]["ratio"] == pytest.approx(ratio, abs=0.02), (size, name)
            per = margin[name]["wall_ms_a_trial"] / margin["loop"]["wall_ms_a_trial"]
            assert margin[name]["ratio"] == pytest.approx(per, abs=0.01), (size, name)
    run = table["profile_local_50"]
    timeline = ["first_line_s", "first_batch_told_s", "last_trial_told_s", "outputs_written_s"]
    assert [run[k] for k in timeline] == sorted(run[k] for k in timeline), run
    assert run["asks_gil_s"] > run["asks_alone_s"] and run["how"], run


def test_the_start_up_page_s_comparisons_are_the_file_s(quoted):
    """The faults-and-load page says that at 1,000 tasks Hydra and pandas cost more than a
    second core saves (the loop's solving in one process against split over two), and that
    at 10,000 tasks the split saves more than Hydra, pandas and the cluster cost together:
    both read from docs/data/startup.yaml's own pieces."""
    pieces = quoted.data_file("startup")["fixed_costs"]

    def wall(name: str) -> float:
        return pieces[name]["wall_s"]

    def saved(n: int) -> float:
        return wall(f"loop_work_{n}") - wall(f"loop_work_two_processes_{n}")

    assert wall("hydra") + wall("pandas") > saved(1000), pieces
    assert wall("hydra") + wall("pandas") + wall("cluster") < saved(10000), pieces


def test_the_first_use_table_s_ratios_are_its_own_times(quoted):
    """docs/data/first_use.yaml (benchmarks/first_use.py): each study's ratios are its own
    empty-cache and cached seconds divided, "within target" is the wall ratio against the
    file's target, and the least wall ratio is the first run's CPU over the machine's cores
    over the cached wall time (never above the ratio measured)."""
    table = quoted.data_file("first_use")
    target = table["machine"]["target_ratio"]
    studies = [key for key in table if key != "machine"]
    assert studies, table
    for study in studies:
        for code, run in table[study].items():
            empty, cached = run["empty"], run["cached"]
            assert run["ratio_wall"] == pytest.approx(empty["wall_s"] / cached["wall_s"], abs=0.01)
            assert run["ratio_cpu"] == pytest.approx(empty["cpu_s"] / cached["cpu_s"], abs=0.01)
            assert run["within_target"] == (run["ratio_wall"] <= target), (study, code)
            least = empty["cpu_s"] / table["machine"]["cores"] / cached["wall_s"]
            assert run["least_ratio_wall"] == pytest.approx(least, abs=0.01), (study, code)
            assert run["least_ratio_wall"] <= run["ratio_wall"], (study, code)
            # the benchmarks page: "for both studies that compile, it is above the aim"
            assert (run["least_ratio_wall"] > target) == (empty["compiled"] > 0), (study, code)


def test_the_compile_table_names_kernels_the_solvers_make(quoted):
    """docs/data/compile_costs.yaml (benchmarks/compile_costs.py): every kernel it names is a
    cached kernel of the solvers (made by compile_once), and no kernel's seconds exceed its
    run's total compile seconds."""
    import importlib

    from solvers.kit.compile_once import KERNELS

    for study, run in quoted.data_file("compile_costs").items():
        assert run["kernels"], study
        for key, row in run["kernels"].items():
            assert 0 < row["seconds"] <= run["compile_s"], (study, key)
            if key != "library":
                module, name = f"solvers.{row['kernel']}".rsplit(".", 1)
                kernel = getattr(importlib.import_module(module), name)
                assert any(kernel is made for made in KERNELS), (study, key)


def test_the_lock_tables_show_fewer_compilations_with_the_lock(quoted):
    """docs/data/compile_lock.yaml: with the lock a study on an empty cache compiles fewer
    entries and spends less CPU than without it, a cached run compiles none, and the two
    pytest processes compile no entry twice; what the benchmarks page says of it."""
    lock = quoted.data_file("compile_lock")
    study, tests = lock["study"], lock["tests"]
    assert study["with_lock"]["empty"]["compiled"] < study["without_lock"]["empty"]["compiled"]
    assert study["with_lock"]["empty"]["cpu_s"] < study["without_lock"]["empty"]["cpu_s"]
    cached = [study[side]["cached"]["compiled"] for side in ("with_lock", "without_lock")]
    assert cached == [0, 0]
    assert tests["with_lock"]["compiled_twice"] == 0 < tests["without_lock"]["compiled_twice"]
