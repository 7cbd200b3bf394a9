"""HTML report sections of ``hand_guessing`` rows: the average guesses against a strategy's
numeric parameter (:mod:`solvers.kit.axis_plots`), from the summary's table (chunks added
up); every row is in the report's table of all results."""

from __future__ import annotations

import pandas as pd

from solvers.hand_guessing.summary import SCORE, result_table
from solvers.kit.axis_plots import axis_report_sections
from solvers.kit.stored_rows import StoredRows, takes_stored_rows


@takes_stored_rows
def report(rows: pd.DataFrame | StoredRows) -> list:
    """The figures of the average guesses against each numeric parameter of a strategy
    taking three values or more (none otherwise)."""
    if not len(rows):
        return []
    return axis_report_sections(result_table(rows), SCORE)
