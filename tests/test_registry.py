"""The registry's refusals when a family is registered: a part of another kind, a name
registered twice, a column of an unknown dtype; and a family's parts as it declares them."""

from __future__ import annotations

import pytest

from solvers import registry
from solvers.params import Param, as_int
from solvers.registry import Family, Presentation, Rules, Scheduling, Solver, register

PARAMS = (Param("n", as_int, 1, "a number", dtype="int64"),)


def family(name: str, **parts) -> Family:
    """A family of one parameter whose run returns one row, with ``parts`` replaced."""
    given = {
        "rules": Rules(params=PARAMS),
        "solver": Solver(run=lambda task: [{"twice": 2 * task["n"]}], columns={"twice": "int64"}),
        **parts,
    }
    return Family(name=name, version="1", **given)


@pytest.fixture
def registered():
    """The names registered by a test, taken out of the registry after it."""
    names: list[str] = []
    yield names
    for name in names:
        registry._FAMILIES.pop(name, None)


@pytest.mark.parametrize(
    ("part", "value", "kind"),
    [
        ("rules", PARAMS, "Rules"),  # the parameters given where their Rules belong
        ("solver", lambda task: [], "Solver"),
        ("scheduling", {"estimate": None}, "Scheduling"),
        ("presentation", "mod:summarize", "Presentation"),
    ],
)
def test_a_part_of_another_kind_is_refused_naming_the_family_and_the_part(
    registered, part, value, kind
):
    registered.append("test_wrong_part")
    with pytest.raises(TypeError, match=rf"family 'test_wrong_part': {part}=.* is not a {kind}"):
        register(family("test_wrong_part", **{part: value}))
    assert "test_wrong_part" not in registry.families()


def test_a_name_registered_twice_and_an_unknown_dtype_are_refused(registered):
    registered.append("test_twice")
    register(family("test_twice"))
    with pytest.raises(ValueError, match="family 'test_twice' is registered twice"):
        register(family("test_twice"))
    registered.append("test_dtype")
    odd = Solver(run=lambda task: [], columns={"when": "datetime"})
    with pytest.raises(ValueError, match=r"family 'test_dtype': unknown column dtypes"):
        register(family("test_dtype", solver=odd))


def test_a_registered_family_is_solved_and_scheduled_through_its_parts(registered):
    """solve reads the rules (the default filled in), the solver (its columns), and the
    scheduling (a task that spreads runs the named function in place of run); the parts
    a family leaves out are empty."""
    registered.append("test_parts")
    fam = register(family("test_parts"))
    assert fam.scheduling == Scheduling() and fam.presentation == Presentation()
    assert registry.get_family("test_parts") is fam
    (row,) = registry.solve({"family": "test_parts"})
    assert (row["n"], row["twice"], row["status"]) == (1, 2, "ok")
    registered.append("test_spread")
    spread = Scheduling(
        spreads_over_cluster=lambda task: task["n"] > 1,
        run_over_cluster="tests.test_registry:spread_rows",
    )
    register(family("test_spread", scheduling=spread))
    assert registry.solve({"family": "test_spread", "n": 1})[0]["twice"] == 2
    assert registry.solve({"family": "test_spread", "n": 3})[0]["twice"] == -3


def spread_rows(task) -> list[dict]:
    """The rows of a spread task of test_spread: told apart from run's by their sign."""
    return [{"twice": -task["n"]}]
