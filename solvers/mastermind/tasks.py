"""From a checked task of ``mastermind`` to its row: the exact evaluation of a heuristic,
the optimal search or a strategy of one's own (the family's :class:`~solvers.family.Solver`)."""

from __future__ import annotations

from solvers.family import Solver
from solvers.mastermind import own
from solvers.mastermind.strategies import evaluate, result_columns
from solvers.own_strategy import is_own
from solvers.registry import Row, Task


def run(task: Task) -> list[Row]:
    """One row: the exact evaluation of the strategy over every code."""
    if is_own(task):  # a strategy of one's own (own.py): its decision tree, the same columns
        guesses, first, nodes = own.tree(task)
        return [result_columns(task["pegs"], task["colours"], task["jar"], guesses, first, nodes)]
    if task["strategy"] == "optimal":
        from solvers.mastermind.optimal_task import run_optimal

        return [run_optimal(task)]
    sm = task["strategy"] == "sharma_mittal"
    r, t = (task["entropy_r"], task["entropy_t"]) if sm else (1.0, 1.0)
    return [evaluate(task["pegs"], task["colours"], task["jar"], task["strategy"], r, t)]


# each result column in a line (the report's tooltips and column lists)
COLUMN_DOCS = {
    "expected_guesses": "expected number of guesses to find the code under the jar's "
    "distribution, the last (right) one included",
    "expected_guesses_exact": "expected_guesses as an exact fraction p/q",
    "total_guesses": "guesses summed over every code (a uniform jar; empty for another jar)",
    "max_guesses": "the most guesses any code takes",
    "histogram": "codes found in 1, 2, 3, ... guesses",
    "guess_pmf": "probability of finding the code in 1, 2, 3, ... guesses (jar-weighted)",
    "first_guess": "the first guess of the strategy's decision tree",
    "n_codes": "codes the decision tree covers (all codes, or those of one subtree)",
    "tree_nodes": "nodes of the strategy's decision tree",
    "search_nodes": "optimal: nodes the branch and bound search visited",
    "subtree_mass_exact": "optimal: the jar probability of the codes the task covers, p/q (1 "
    "for the whole game)",
}

SOLVER = Solver(
    run=run,
    column_docs=COLUMN_DOCS,
    columns={
        "expected_guesses": "float64",
        "expected_guesses_exact": "string",
        "total_guesses": "int64",
        "max_guesses": "int64",
        "histogram": "list<int64>",
        "guess_pmf": "list<float64>",
        "first_guess": "string",
        "n_codes": "int64",
        "tree_nodes": "int64",
        "search_nodes": "int64",
        "subtree_mass_exact": "string",
    },
)
