"""Sizes, counts and times in words a person writes (solvers/kit/words.py), as messages,
the plan's table and the progress bars say them."""

from __future__ import annotations

import pytest

from solvers.kit.words import counted, format_count, format_duration


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.02, "0.02 s"), (3.5, "3.5 s"), (42, "42 s"), (200, "3.3 min"), (720, "12 min"),
     (5400, "90 min"), (41.9 * 3600, "41.9 h"), (4.5 * 86400, "4.5 days"),
     (3 * 365.25 * 86400, "3 years"), (3_476_563_697.2 * 3600, "396,596 years")],
)  # fmt: skip
def test_a_duration_is_said_in_one_decimal_of_a_unit_from_twice_its_size(seconds, said):
    assert format_duration(seconds) == said


@pytest.mark.parametrize(
    ("x", "said"),
    [(12, "12"), (1234.5, "1.23k"), (45.6e6, "45.6M"), (7.8e9, "7.8G"), (1.2e12, "1.2T")],
)
def test_a_count_is_said_in_three_digits_and_a_suffix(x, said):
    assert format_count(x) == said


@pytest.mark.parametrize(
    ("n", "noun", "said"),
    [(1, "task", "1 task"), (2, "task", "2 tasks"), (0, "worker", "0 workers"),
     (1, "worker process", "1 worker process"), (3, "worker process", "3 worker processes"),
     (12_000, "batch", "12,000 batches"), (2, "strategy", "2 strategies"),
     (3, "study", "3 studies"), (2, "day", "2 days"), (1, "entry", "1 entry")],
)  # fmt: skip
def test_a_number_and_its_noun_agree(n, noun, said):
    assert counted(n, noun) == said
