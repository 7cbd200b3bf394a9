"""Contract tests over every registered family (in the style of OpenSpiel's game tests).

Each family must: solve a small task into rows whose columns are exactly the declared ones
with the declared types; give the same task id for the same task; refuse unknown
parameters and strategies listing the valid ones; have a study config and run end to end.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
import yaml

from solvers import TaskError, families, get_family, solve, validate
from solvers.params import FloatCheck, IntCheck, IntListCheck, OrAbsent, check_markdown, one_of
from solvers.registry import param_columns, row_columns, std_column
from solvers.task_ids import task_id
from tests.helpers import golden_rows
from tests.helpers.repository import ROOT
from tests.helpers.task_ids import reference_task_id

# every registered family (tests may register test-only families: they are skipped), with
# the small, quick tasks it declares itself (Family.examples)
REAL = sorted(f for f in families() if not f.startswith("test_"))
EXAMPLES = {f: dict(get_family(f).examples[0]) for f in REAL if get_family(f).examples}
PY_TYPES = {
    "string": str,
    "int64": int,
    "float64": (float, int),
    "bool": bool,
    "list<float64>": list,
    "list<int64>": list,
}


def test_every_real_family_has_an_example_and_a_study():
    assert sorted(EXAMPLES) == REAL  # each declares Family.examples
    studied = {
        yaml.safe_load(p.read_text())["family"] for p in (ROOT / "conf/study").glob("*.yaml")
    }
    assert set(REAL) <= studied


@pytest.mark.parametrize("family", REAL)
def test_rows_have_exactly_the_declared_columns_and_types(family):
    rows = solve({"family": family, **EXAMPLES[family]})
    assert rows
    columns = row_columns(family)
    for row in rows:
        # the pipeline adds task_id and study; everything else comes from solve()
        assert set(row) | {"task_id", "study"} == set(columns)
        assert row["status"] == "ok" and row["error"] is None and row["seconds"] >= 0
        for name, value in row.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            assert isinstance(value, PY_TYPES[columns[name]]), (name, value, columns[name])
            if columns[name].startswith("list<"):
                inner = float if "float" in columns[name] else int
                assert all(isinstance(v, inner | int) for v in value), name


@pytest.mark.parametrize("family", REAL)
def test_rows_are_the_golden_rows_of_the_family_s_version(family):
    """tests/golden/<family>-v<version>.json holds the schema of the family's rows (each
    column's Arrow type, in order) and the ids and rows of a few small tasks, as its current
    version computes them: the schema and rows this code computes are those, so a change to
    either fails until the family has a new version (and that version its own file)."""
    path = golden_rows.golden_path(family)
    assert path.exists(), (
        f"{path.name} is missing: a new version of {family} needs its golden rows "
        f"(python -m tests.helpers.golden_rows {family})"
    )
    stored = golden_rows.read(path)
    computed = json.loads(golden_rows.as_json(golden_rows.computed(family)))  # as stored: JSON
    assert stored["version"] == get_family(family).version
    assert list(stored["schema"].items()) == list(computed["schema"].items())
    assert golden_rows.differences(stored["tasks"], computed["tasks"]) == []


def test_golden_rows_cover_every_family_and_differ_where_the_rows_do():
    """Every family has golden tasks, and the comparison of golden rows holds something: a
    changed value, a float beyond 12 digits, a new column or a lost row each differ; NaN
    matches NaN and a float's last bits do not count."""
    assert sorted(golden_rows.TASKS) == REAL
    row = {"p": 0.25, "p_exact": "1/4", "n": 3, "pmf": [0.5, math.nan]}
    assert golden_rows.differences([row], [dict(row, p=0.25 * (1 + 1e-15))]) == []
    assert golden_rows.differences([row], [dict(row, p_exact="1/3")]) == [
        "[0].p_exact: '1/4' stored, '1/3' computed"
    ]
    assert golden_rows.differences([row], [dict(row, p=0.25 * (1 + 1e-9))])
    assert golden_rows.differences([row], [dict(row, n=3.0)])
    assert golden_rows.differences([row], [dict(row, q=None)]) == ["[0].q: new"]
    assert golden_rows.differences([row], []) == [": 1 items stored, 0 computed"]


def variance_columns(family: str) -> list[str]:
    """The columns of ``family``'s rows that hold a variance (float or exact text)."""
    return [name for name in row_columns(family) if "variance" in name]


@pytest.mark.parametrize("family", REAL)
def test_every_variance_has_its_standard_deviation_beside_it(family):
    """Each variance column (``score_variance``, ``score_variance_exact``) has a float64
    std column (``score_std``) declared, and the example's rows hold the square root of the
    float variance there."""
    columns = row_columns(family)
    for name in variance_columns(family):
        assert columns.get(std_column(name)) == "float64", (family, name, std_column(name))
    for row in solve({"family": family, **EXAMPLES[family]}):
        for name in variance_columns(family):
            if name.endswith("_exact") or row[name] is None:
                continue
            assert row[std_column(name)] == math.sqrt(row[name]), (name, row[name])


def test_card_guessing_s_rows_have_variances_and_their_std():
    """The test above holds something: card_guessing's rows have a variance, exact and float."""
    assert variance_columns("card_guessing") == ["score_variance", "score_variance_exact"]
    (row,) = solve({"family": "card_guessing", **EXAMPLES["card_guessing"]})
    assert row["score_std"] == math.sqrt(float(Fraction(row["score_variance_exact"])))


def test_a_std_column_is_named_for_its_variance():
    assert std_column("score_variance") == std_column("score_variance_exact") == "score_std"
    assert std_column("variance") == "std" and std_column("expected_score") is None


@pytest.mark.parametrize("family", REAL)
def test_a_list_parameter_s_list_column_holds_its_integers(family):
    """A parameter declaring ``list_column`` has it as a list<int64> column beside its text
    ("3,3,3"), in the rows solve gives and in the columns an error row gets."""
    listed = [p for p in get_family(family).rules.params if p.list_column]
    columns = row_columns(family)
    task = validate({"family": family, **EXAMPLES[family]})
    for row in [*solve(task), param_columns(task)]:
        for p in listed:
            assert columns[p.list_column] == "list<int64>"
            if row[p.name] is None:
                assert row[p.list_column] is None
            else:
                assert row[p.list_column] == [int(v) for v in row[p.name].split(",")]


def test_card_guessing_s_deck_is_a_list_of_integers_too():
    (row,) = solve({"family": "card_guessing", "deck": "10,4, 4", "strategy": "greedy",
                    "method": "float"})  # fmt: skip
    assert (row["deck"], row["deck_counts"]) == ("10,4,4", [10, 4, 4])


@pytest.mark.parametrize("family", REAL)
def test_task_ids_are_deterministic_and_ignore_execution_knobs(family):
    task = validate({"family": family, **EXAMPLES[family]})
    assert task_id(task) == task_id(validate({"family": family, **EXAMPLES[family]}))
    assert validate(task) == task  # canonical tasks are fixed points
    knobs = [p for p in get_family(family).rules.params if not p.identity]
    for p in knobs:
        changed = dict(task)
        if isinstance(task[p.name], int) and not isinstance(task[p.name], bool):
            changed[p.name] = task[p.name] + 1
            assert task_id(validate(changed)) == task_id(task), p.name


def test_a_task_s_games_do_not_change_with_its_family_s_version(monkeypatch):
    """A task's generator is seeded from its id as version 1 of its family made it: another
    version gives the task another id but the same seed, hence the same Monte Carlo games."""
    import dataclasses
    import hashlib

    from solvers import registry
    from solvers.task_ids import identity_params, seed_id

    task = validate({"family": "triples", "ranks": 4, "suits": 4, "k": 2, "n": 2,
                     "analysis": "monte_carlo", "games": 300})  # fmt: skip
    at_1 = json.dumps({"version": "1", "params": identity_params(task)}, sort_keys=True,
                      separators=(",", ":"), default=str)  # fmt: skip
    seed = hashlib.sha256(at_1.encode()).hexdigest()[:20]
    assert seed_id(task) == seed
    before_id, (before,) = task_id(task), solve(task, canonical=True)
    family = dataclasses.replace(get_family("triples"), version="7")
    monkeypatch.setitem(registry._FAMILIES, "triples", family)
    assert task_id(task) != before_id and seed_id(task) == seed
    (row,) = solve(task, canonical=True)
    assert (row["wins"], row["p_win_mc"]) == (before["wins"], before["p_win_mc"])


ODD_VALUES = [
    0,
    -7,
    10**30,
    True,
    False,
    None,
    0.1,
    -0.0,
    0.0,
    1e-300,
    1.5e300,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "plain",
    'quote " and \\ back',
    "\u00e9t\u00e9 \u2603",
    "\n\t",
    [],
    [1, 2, 3],
    [1, True],
    [1.0, 2],
    [[1, 2], [3]],
    (4, 5),
    {"b": 1, "a": [2.5, None]},
    Fraction(1, 3),
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=repr)
def test_task_ids_are_the_hash_of_the_defined_json(value):
    """The assembled JSON of task_id is byte for byte json.dumps (stored ids never change),
    whatever the value's type: ints, bools, signed zeros, non-finite floats, escapes, nesting,
    and objects written through str()."""
    task = {"family": "card_guessing", "strategy": "greedy", "deck": [2, 1], "zz": value}
    assert task_id(task) == reference_task_id(task)


@pytest.mark.parametrize("family", REAL)
def test_the_grid_path_gives_validate_s_task_and_id(family):
    """solvers.grid (planning's path) equals validate + task_id on every example of every
    family, also where a whole-task check fills in a parameter (mastermind's second); a value
    repeated on an axis is one task."""
    from solvers.grid import Grid

    cases = [{"family": family, **example} for example in get_family(family).examples]
    for raw in cases:
        fixed = {k: v for k, v in raw.items() if k in ("family", "strategy")}
        axes = [(k, [v, v]) for k, v in raw.items() if k not in fixed]  # each value twice
        grid = Grid.checked(fixed, axes)
        assert len(grid) == 1
        ((tid, task),) = grid.tasks()
        assert task == validate(raw) and tid == task_id(task) == reference_task_id(task)
        assert grid.ids() == [tid]


@pytest.mark.parametrize("family", REAL)
def test_unknown_parameters_and_strategies_list_the_valid_ones(family):
    with pytest.raises(TaskError) as err:
        solve({"family": family, **EXAMPLES[family], "no_such_parameter": 1})
    assert err.value.key == "no_such_parameter"
    for p in get_family(family).rules.params:
        assert p.name in str(err.value)
    fam = get_family(family)
    if fam.rules.strategies:
        with pytest.raises(TaskError) as err:
            solve({**EXAMPLES[family], "family": family, "strategy": "no_such_strategy"})
        assert err.value.key == "strategy"
        assert all(s in str(err.value) for s in fam.rules.strategies)


def test_an_unknown_family_lists_the_valid_ones():
    with pytest.raises(TaskError) as err:
        solve({"family": "poker"})
    assert err.value.key == "family"
    assert all(f in str(err.value) for f in REAL)


@pytest.mark.parametrize("family", REAL)
def test_every_parameter_is_documented_with_a_known_dtype(family):
    for p in get_family(family).rules.params:
        assert p.doc, f"{family}.{p.name} has no doc"
        assert p.dtype in PY_TYPES


@pytest.mark.parametrize("family", REAL)
def test_every_parameter_says_in_words_what_it_accepts_and_refuses_in_those_words(family):
    """The words come from the bounds the check enforces: each bound is accepted, the value
    just past it is refused with ``must be <words>``, and the words name the bound."""
    bounded = 0
    for p in get_family(family).rules.params:
        assert check_markdown(p.check), f"{family}.{p.name}: its checker gives no words"
        inner = p.check
        if isinstance(inner, OrAbsent):
            assert inner(None) is None and check_markdown(inner).endswith(", or absent")
            inner = inner.check
        if not isinstance(inner, IntCheck):
            continue
        for bound, step in ((inner.low, -1), (inner.high, 1)):
            if bound is None:
                continue
            bounded += 1
            assert p.check(bound) == bound and f"{bound:,}" in inner.words
            with pytest.raises(ValueError) as err:
                p.check(bound + step)
            assert str(err.value) == f"must be {inner.words}", (family, p.name)
        with pytest.raises(ValueError, match=f"^must be {inner.words}$"):
            p.check("two")
    assert bounded, f"{family} has no integer parameter with a bound"


@pytest.mark.parametrize(
    ("check", "words"),
    [
        (IntCheck(2, 10**6), "an integer from 2 to 1,000,000"),
        (OrAbsent(IntCheck(low=1)), "an integer of at least 1, or absent"),
        (IntCheck(high=9), "an integer of at most 9"),
        (FloatCheck(low=0.0), "a finite number of at least 0"),
        (FloatCheck(low=0.5, allow_inf=True), "a number of at least 0.5 (inf allowed)"),
        (one_of(("greedy", "optimal", "info")), "one of greedy, optimal, info"),
        (IntListCheck(low=1), "a list of positive integers"),
        (IntListCheck(low=0, min_len=2), "a list of integers of at least 0, at least 2 of them"),
    ],
)
def test_a_check_s_words_are_made_from_its_bounds(check, words):
    assert check.words == words
    assert check_markdown(check).replace("`", "") == words


def test_a_refused_value_is_told_what_the_parameter_accepts():
    with pytest.raises(TaskError) as err:
        validate({"family": "high_low", "n": 1})
    assert str(err.value) == "n=1: must be an integer from 2 to 1,000,000"
    with pytest.raises(TaskError) as err:
        validate({"family": "card_guessing", "deck": [3, -1], "strategy": "greedy"})
    assert str(err.value) == "deck=[3, -1]: must be a list of positive integers"
    with pytest.raises(TaskError) as err:
        validate({"family": "card_guessing", "deck": [3], "feedback": "some"})
    assert str(err.value) == "feedback='some': must be one of partial, complete, none"


@pytest.mark.parametrize("family", REAL)
def test_a_canonical_task_solves_the_same_without_validating_again(family):
    task = validate({"family": family, **EXAMPLES[family]})
    strip = ("seconds",)
    plain = [{k: v for k, v in r.items() if k not in strip} for r in solve(task)]
    fast = [{k: v for k, v in r.items() if k not in strip} for r in solve(task, canonical=True)]
    assert plain == fast


@pytest.mark.parametrize("family", REAL)
def test_the_family_s_summary_renders_its_example_rows(family, tmp_path):
    """Presentation.summary (imported only when called) turns the family's ok rows into Markdown."""
    import pandas as pd

    from solvers.registry import family_summary

    rows = [
        r for example in get_family(family).examples for r in solve({"family": family, **example})
    ]
    summarize = family_summary(family)
    assert summarize is not None, f"{family} names no summary"
    text = summarize(pd.DataFrame(rows), tmp_path)
    assert isinstance(text, str) and text.strip()
    from solvers.kit.summary_parts import saved_check

    for png in sorted(tmp_path.glob("*.png")):  # drawn by the kit, readable at page width
        assert saved_check(png)[0] == "ok", (png.name, saved_check(png)[0])


def strategy_subsets(names: list[str]) -> list[tuple[str, ...]]:
    """Each strategy alone and every strategy but one (the subsets a study gets when its
    file names one strategy, or when one is removed by ``~study.grids.0.strategies.NAME``)."""
    alone = [(s,) for s in names]
    but_one = [tuple(s for s in names if s != left) for left in names]
    return list(dict.fromkeys(alone + [s for s in but_one if s]))


@pytest.mark.slow
@pytest.mark.parametrize("family", [f for f in REAL if get_family(f).rules.strategies])
def test_the_family_s_summary_renders_any_subset_of_its_strategies(family, tmp_path):
    """Every family's summary is written for rows holding any subset of the strategies it
    accepts on its examples: text, and figures that pass their readability check."""
    import pandas as pd

    from solvers.kit.summary_parts import saved_check
    from solvers.registry import family_summary

    rows = []
    for example in get_family(family).examples:
        for strategy in get_family(family).rules.strategies:
            try:
                rows += solve({"family": family, **example, "strategy": strategy})
            except TaskError:  # not defined on this example (e.g. another feedback model)
                continue
    frame = pd.DataFrame(rows)
    solved = list(dict.fromkeys(frame["strategy"]))
    assert len(solved) >= 2, f"{family}: its examples admit one strategy only"
    summarize = family_summary(family)
    for k, kept in enumerate(strategy_subsets(solved)):
        out = tmp_path / str(k)
        out.mkdir()
        text = summarize(frame[frame["strategy"].isin(kept)], out)
        assert isinstance(text, str) and text.strip(), kept
        for png in sorted(out.glob("*.png")):
            assert saved_check(png)[0] == "ok", (kept, png.name, saved_check(png)[0])
