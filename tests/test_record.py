"""The manual's record of results: what it claims as new apart from what it reproduced, one list
of new results read from docs/data/results.yaml, a command beside each value that computes it,
costs quoted from the data files that measured them, one deck notation, "exact" only beside
exact values, digits as many as each check supports, and a glossary of the words it uses."""

from __future__ import annotations

import csv
import re
import shlex
from fractions import Fraction
from functools import cache
from typing import Any

import pytest

from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


@pytest.fixture(scope="module")
def quoted():
    """docs/quoted.py, as the manual's build imports it (docs/hooks.py)."""
    from docs import quoted

    return quoted


@cache
def rendered_pages() -> dict[str, str]:
    """Every page's Markdown with its quotes and results lists expanded, by its path under
    docs/ (as the build renders the numbers)."""
    from docs import quoted

    out = {}
    for page in PAGES:
        name = str(page.relative_to(DOCS))
        out[name] = quoted.expand_quotes(page.read_text(encoding="utf-8"), name)
    return out


def results() -> dict[str, dict[str, Any]]:
    from docs import quoted

    return quoted.data_file("results")


# --- new apart from reproduced -------------------------------------------------------------


def test_every_result_says_whether_it_is_new_or_reproduced_and_a_reproduced_one_its_source():
    """Each entry of results.yaml is ``claim: new`` or ``claim: reproduced``; a reproduced one
    names the source that published it, a new one names none."""
    for key, r in results().items():
        assert r.get("claim") in ("new", "reproduced"), key
        assert ("source" in r) == (r["claim"] == "reproduced"), key


def test_a_value_a_page_calls_reproduced_is_not_listed_as_new():
    """A line of a page that quotes a result and calls it reproduced, or names a source that
    published it, quotes an entry whose claim is ``reproduced``."""
    quote = re.compile(r"\{\{\s*results\.([A-Za-z0-9_]+)\.")
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            if "reproduced" not in line.lower():
                continue
            for key in quote.findall(line):
                assert results()[key]["claim"] == "reproduced", (page.name, line)


def test_the_results_page_lists_new_results_first_and_reproduced_ones_apart():
    """The results page has a section of the new results, holding every entry claimed new and
    no other, and after it a section of the reproduced ones with their sources."""
    page = rendered_pages()["results.md"]
    new_part, reproduced_part = page.split("## Reproduced", 1)
    assert "## New" in new_part
    for r in results().values():
        heading = f"### {r['title']}\n"
        if r["claim"] == "new":
            assert heading in new_part and heading not in reproduced_part, r["title"]
        else:
            assert heading in reproduced_part and heading not in new_part, r["title"]
            assert r["source"] in reproduced_part


def test_the_home_page_s_list_of_new_results_is_the_results_file_s(quoted):
    """The home page lists exactly the new results of results.yaml (each title with its value
    as the results page shows it), links the results page from that list and from "How to
    cite", and types out no list of its own."""
    source = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "<!-- results-list -->" in source
    page = rendered_pages()["index.md"]
    section = page.split("## Results not published elsewhere", 1)[1].split("\n## ", 1)[0]
    listed = [line for line in section.splitlines() if line.startswith("- ")]
    new = [r for r in results().values() if r["claim"] == "new"]
    assert len(listed) == len(new)
    for line, r in zip(listed, new, strict=True):
        assert line.startswith(f"- {r['title']}: **{quoted.shown(r)}**"), line
    assert "](results.md)" in section
    cite = page.split("## How to cite", 1)[1].split("\n## ", 1)[0]
    assert "](results.md)" in cite


# --- commands and costs --------------------------------------------------------------------


def planned_tasks(command: str) -> list[dict[str, Any]]:
    """The tasks ``command`` (``python -m pipeline OVERRIDES``) would run, planned in this
    process as ``stage=plan`` plans them."""
    from omegaconf import OmegaConf

    from pipeline.study import planned
    from tests.helpers.runs import compose_config

    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "pipeline"], command
    study = OmegaConf.to_container(compose_config(*words[3:]).study, resolve=True)
    plan = planned(study)
    return [task for grid in plan.grids for _, task in grid.tasks(0, len(grid))]


@pytest.mark.parametrize("key", list(results()))
def test_a_result_s_command_plans_the_task_that_gives_its_value(key):
    """Each result's reproduce command plans (as ``stage=plan`` does) a task with the entry's
    parameters, of a family whose rows have the entry's column."""
    from solvers import get_family

    r = results()[key]
    tasks = planned_tasks(r["command"])
    wanted = r["task"]
    found = [t for t in tasks if all(t.get(k) == v for k, v in wanted.items())]
    assert found, (key, r["command"], wanted)
    assert r["column"] in get_family(wanted["family"]).solver.columns, key


UNIT = re.compile(r"\d[\d.,]*\s*(?:s\b|min\b|h\b|GB\b|MB\b|CPU)")


def test_every_cost_is_quoted_from_a_data_file_or_said_to_be_another_entry_s_run(quoted):
    """A result's cost quotes its measurements from docs/data (no time or size typed into the
    text), or is "the same run as" an entry with the same command whose cost is measured."""
    entries = list(results().items())
    for i, (key, r) in enumerate(entries):
        cost = r["cost"]
        bare = re.sub(r"`[^`]*`", "", quoted.QUOTE.sub("", cost))
        assert not UNIT.search(bare), (key, cost)
        if cost.startswith("the same run as"):
            earlier = [e for k, e in entries[:i] if e["command"] == r["command"]]
            assert earlier and quoted.QUOTE.search(earlier[0]["cost"]), key
        else:
            assert quoted.QUOTE.search(cost), (key, cost)


def test_the_ranks_pages_quote_one_run_for_each_out_of_core_solve(quoted):
    """The results page's costs of 10 and 11 types are the runs the ranks page's cost table
    quotes (one data key each), and the cost table shows the same measurement."""
    ranks_page = (DOCS / "games" / "card_guessing_ranks52.md").read_text(encoding="utf-8")
    for key, run in (("ranks_10", "second.n10"), ("ranks_11", "fitted.n11")):
        cost = results()[key]["cost"]
        assert f"ranked_out_of_core.{run}.cpu_s" in cost, key
        assert f"ranked_out_of_core.{run}.cpu_s" in ranks_page, key


# --- digits --------------------------------------------------------------------------------


def significant_digits(text: str) -> int:
    mantissa = text.lower().split("e")[0]
    return len(re.sub(r"\D", "", mantissa).lstrip("0"))


def test_a_float_result_is_shown_to_the_digits_its_check_supports(quoted):
    """Every float of results.yaml carries the relative agreement its check bounds, and every
    page that quotes it shows no more digits than that agreement supports."""
    supported = {}
    for key, r in results().items():
        if isinstance(r["value"], float):
            assert 0 < r["agreement"] < 1e-6, key
            supported[key] = significant_digits(quoted.checked_digits(r["value"], r["agreement"]))
            shown = quoted.shown(r)
            assert significant_digits(shown) == supported[key], (key, shown)
    quote = re.compile(r"\{\{\s*results\.([A-Za-z0-9_]+)\.value(?::([^}\s]*))?\s*\}\}")
    for page in PAGES:
        for match in quote.finditer(page.read_text(encoding="utf-8")):
            key, spec = match.groups()
            if key in supported:
                text = quoted.expand_quotes(match.group(0))
                assert significant_digits(text) <= supported[key], (page.name, match.group(0))


def test_a_checked_quote_of_a_value_without_an_agreement_is_refused_naming_it(quoted):
    """``checked`` needs the agreement beside the value: without one the build stops, naming
    the quote and the keys there are."""
    with pytest.raises(quoted.QuoteError, match=r"p\.md.*suits52_complete has no 'agreement'"):
        quoted.expand_quotes("{{ results.suits52_complete.value:checked }}", "p.md")


def test_checked_digits_end_at_the_place_of_the_error_bound(quoted):
    """``checked`` writes a float so its last digit is the place of agreement x value."""
    assert quoted.checked_digits(15.531637252573518, 1e-12) == "15.53163725257"
    assert quoted.checked_digits(2.9801853310422587e-08, 1e-12) == "2.980185331042e-8"
    assert quoted.checked_digits(5.426734082048474, 1e-12) == "5.426734082048"


# --- deck notation -------------------------------------------------------------------------

DECK = re.compile(r"(?<![\d^.,])(\d+) x (\d+)(?![\d^.])")
NUMBER = re.compile(r"(?<![\w.])(\d+)\.(\d{4,})(?:e(-?\d+))?(?![\d/])")
SPAN_END = re.compile(r"\||\n\n|\.\s|\(\d+(?:,\d+)+\)")


def deck_values() -> list[tuple[tuple[int, ...], float]]:
    """Values whose deck the data files record: the results (their task's deck, or ranks of
    ``suits`` cards), n types of 4, the ranks study's Monte Carlo and the suits52 decks."""
    from docs import quoted

    out = []
    for r in results().values():
        task, value = r["task"], r["value"]
        if isinstance(value, int):
            continue
        number = float(Fraction(value)) if isinstance(value, str) else value
        if "deck" in task:
            out.append((tuple(task["deck"]), number))
        elif "ranks" in task:
            out.append(((task["suits"],) * task["ranks"], number))
    for name in ("ranks_4_cards.csv", "ranks52_monte_carlo.csv"):
        with (DOCS / "data" / name).open(newline="") as f:
            for row in csv.DictReader(f):
                deck = tuple(int(c) for c in row["deck"].split(","))
                out.append((deck, float(row["expected_score"])))
    for row in quoted.data_file("suits52_decks").values():
        for field in ("optimal", "greedy_lowest", "best_info"):
            out.append((tuple(row["deck"]), row[field]))
    return out


def shows(text: tuple[str, str, str | None], value: float) -> bool:
    """Whether the number written ``whole.decimals[e exponent]`` is ``value`` rounded."""
    whole, decimals, exponent = text
    written = float(f"{whole}.{decimals}e{exponent or 0}")
    return abs(written - value) <= 0.51 * 10.0 ** (int(exponent or 0) - len(decimals))


def deck_claims(text: str) -> list[tuple[str, tuple[int, ...], str]]:
    """Each ``A x B`` of ``text`` with a decimal written after it in the same sentence or
    table cell (and before the next deck): (the words, the deck A x B names, the number)."""
    found = []
    mentions = list(DECK.finditer(text))
    for i, m in enumerate(mentions):
        stop = mentions[i + 1].start() if i + 1 < len(mentions) else len(text)
        end = SPAN_END.search(text, m.end(), min(stop, m.end() + 300))
        span = text[m.end() : end.start() if end else min(stop, m.end() + 300)]
        types, cards = int(m.group(1)), int(m.group(2))
        for number in NUMBER.finditer(span):
            found.append((text[m.start() : m.end() + 60], (cards,) * types, number.groups()))
    return found


def test_every_deck_written_a_x_b_beside_a_value_is_that_value_s_deck():
    """Every ``A x B`` on a page (types x cards per type, the glossary's notation) followed by
    a value the data files know the deck of is that deck: 4 x 10 is (10,10,10,10)."""
    known = deck_values()
    wrong = []
    for name, text in rendered_pages().items():
        if name.startswith("games/mastermind") or name == "glossary.md":
            continue  # Mastermind writes pegs x colours
        for words, deck, number in deck_claims(text):
            decks = {d for d, v in known if shows(number, v)}
            if decks and deck not in decks:
                wrong.append((name, words, sorted(decks)))
    assert not wrong, wrong


def test_the_deck_check_reads_a_reversed_deck_as_wrong():
    """The notation check refuses 10 x 4 beside the optimum of (10,10,10,10) and accepts
    4 x 10 (the check can fail)."""
    known = deck_values()
    for text, right in (("on 10 x 4: optimum 12.24359.", False), ("on 4 x 10: 12.24359.", True)):
        ((_, deck, number),) = deck_claims(text)
        decks = {d for d, v in known if shows(number, v)}
        assert decks and (deck in decks) == right, text


def test_the_suits52_decks_the_card_guessing_page_quotes_are_recomputed():
    """docs/data/suits52_decks.yaml's 3 x 13 optimum and greedy are what the solvers give."""
    from docs import quoted
    from solvers.card_guessing.any_deck import greedy
    from solvers.card_guessing.uniform_deck import in_memory

    row = quoted.data_file("suits52_decks")["three_of_13"]
    assert row["deck"] == [13, 13, 13]
    assert in_memory.solve(row["deck"]).expected_score == pytest.approx(row["optimal"], rel=1e-12)
    lowest = greedy.greedy(row["deck"], "lowest").expected_score
    assert lowest == pytest.approx(row["greedy_lowest"], rel=1e-12)


def test_the_expected_right_calls_result_is_recomputed():
    """The high/low 13 x 4 expected right calls of results.yaml are the exact solver's."""
    from solvers.high_low import deck

    value = results()["high_low_13x4_correct"]["value"]
    assert Fraction(value) == deck.expected_correct(13, 4, "lose")


# --- "exact" -------------------------------------------------------------------------------

EXACT = re.compile(r"\bexact(?:ly)?\b(?! rational| solver| arithmetic| integers| fractions)", re.I)


def float_values() -> list[float]:
    """Values the data files record as computed in floats or by Monte Carlo (the float results,
    n types of 4, the ranks study's Monte Carlo, the suits52 decks), less those the manual
    also gives as a fraction somewhere (those are exact too)."""
    fractions = set()
    for text in rendered_pages().values():
        for p, q in re.findall(r"(?<![\d/])(\d+)/(\d+)(?![\d/])", text):
            if int(q):
                fractions.add(int(p) / int(q))
    out = [r["value"] for r in results().values() if "agreement" in r]
    out += [
        v
        for deck, v in deck_values()
        if not any(
            isinstance(r["value"], str) and float(Fraction(r["value"])) == v
            for r in results().values()
        )
    ]
    return [v for v in out if not any(abs(v - f) <= 1e-11 * abs(f) for f in fractions)]


def sentences(text: str) -> list[str]:
    """A page's sentences: table rows one by one, other paragraphs cut after each full stop."""
    out = []
    for block in text.split("\n\n"):
        if block.lstrip().startswith("|"):
            out += block.splitlines()
        else:
            out += re.split(r"(?<=\.)\s+(?=[A-Z(*])", block.replace("\n", " "))
    return out


def test_exact_is_never_said_of_a_value_computed_in_floats():
    """No sentence that calls a value exact holds a value the data files record as computed in
    floats or by Monte Carlo; a decimal in a column headed "exact" stands beside its fraction."""
    floats = float_values()
    wrong = []
    for name, text in rendered_pages().items():
        for sentence in sentences(text):
            if not EXACT.search(sentence):
                continue
            for number in NUMBER.finditer(sentence):
                if any(shows(number.groups(), v) for v in floats):
                    wrong.append((name, sentence[:160]))
        for table in re.findall(r"(?:^\|.*\n)+", text, re.M):
            rows = [
                [c.strip() for c in line.strip().strip("|").split("|")]
                for line in table.splitlines()
            ]
            for col, head in enumerate(rows[0]):
                if not EXACT.search(head):
                    continue
                for row in rows[2:]:
                    cell = row[col] if col < len(row) else ""
                    if NUMBER.search(cell) and not re.search(r"\d+/\d+", cell):
                        wrong.append((name, head, cell))
    assert not wrong, wrong


def test_the_ranks_figure_caption_calls_its_values_floats():
    """The ranks figure's caption (n = 10 and 11 out of core, every n by the ranked solver)
    says its values are floats and calls none of them exact."""
    page = (DOCS / "games" / "card_guessing_ranks52.md").read_text(encoding="utf-8")
    caption = next(line for line in page.splitlines() if line.startswith("*The table above"))
    assert "in floats" in caption
    assert not EXACT.search(caption), caption


# --- glossary ------------------------------------------------------------------------------

# the words the pages use in a sense of their own, each defined by the glossary
TERMS = [
    "partial", "greedy", "info", "persistent", "majority", "policy", "out of core",
    "checkpoint", "store", "batch", "claim", "seal", "departure", "code jar", "subtree",
    "memory budget", "solver version", "layer", "canonical state", "ranked", "tie rule", "knob",
    "task", "grid", "study", "family",
]  # fmt: skip


@pytest.mark.parametrize("term", TERMS)
def test_every_term_the_pages_use_is_defined_in_the_glossary(term):
    """Each term is used on a page besides the glossary, and the glossary defines it: in a
    bold heading, or as a strategy name (``greedy``) opening its own definition."""
    word = re.compile(rf"\b{re.escape(term)}s?\b", re.I)
    texts = {p.name: p.read_text(encoding="utf-8") for p in PAGES}
    glossary = texts.pop("glossary.md")
    assert any(word.search(t) for t in texts.values()), term
    headings = " ".join(re.findall(r"^\*\*(.+?)\*\*", glossary, re.M))
    named = re.search(rf"`{re.escape(term)}`, [a-z]", glossary)
    assert word.search(headings) or named, term


def test_the_glossary_says_which_engine_method_float_runs():
    """The glossary's ``method: float`` names the ranked states for a uniform deck's optimum,
    as the card guessing page's engine table does, not the hashed layers alone."""
    glossary = (DOCS / "glossary.md").read_text(encoding="utf-8")
    paragraph = glossary.split("**Ranked.**", 1)[1].split("\n\n", 1)[0]
    assert "3 or more equal\ntypes" in paragraph or "3 or more equal types" in paragraph
    assert not re.search(r"`method: float`\s+is the hashed solver", paragraph)


# --- one value, one estimate ---------------------------------------------------------------

ESTIMATE = re.compile(r"(\d+\.\d+)(?:e(-?\d+))?\s+\+-\s+(\d+\.\d+)(?:e(-?\d+))?")


def estimates(text: str) -> list[tuple[float, float]]:
    """Every ``mean +- standard error`` written on a rendered page."""
    out = []
    for mean, mexp, se, sexp in ESTIMATE.findall(text):
        out.append((float(f"{mean}e{mexp or 0}"), float(f"{se}e{sexp or 0}")))
    return out


def test_the_card_guessing_page_gives_one_monte_carlo_of_greedy_on_the_suit_deck():
    """Greedy on 4 x 13 (lowest ties) has one Monte Carlo estimate on the card guessing page,
    checked against the float value of the page's own table."""
    page = rendered_pages()["games/card_guessing.md"]
    row = next(line for line in page.splitlines() if line.startswith("| (13,13,13,13) | **"))
    greedy = float(row.split("|")[3])
    near = [(m, se) for m, se in estimates(page) if abs(m - greedy) <= 6 * se]
    assert len(near) == 1, near


def test_an_optimum_column_holds_no_monte_carlo_estimate_of_another_policy():
    """A table column headed as the optimum shows a Monte Carlo estimate (of another policy)
    only where it says the optimum is not known."""
    for name, text in rendered_pages().items():
        for table in re.findall(r"(?:^\|.*\n)+", text, re.M):
            rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
            for col, head in enumerate(rows[0]):
                if "optimum" not in head.lower() or "-" in head:
                    continue
                for row in rows[2:]:
                    cell = row[col] if col < len(row) else ""
                    assert "Monte Carlo" not in cell or "not known" in cell, (name, head, cell)


def test_the_higher_lower_pages_give_one_monte_carlo_figure_per_tie_rule():
    """The higher or lower page's Monte Carlo figures of the majority rule on 13 x 4 are the
    52-card page's, one per tie rule, to the digits written."""
    from tests.test_manual_claims import table_rows

    deck52 = rendered_pages()["games/high_low_52.md"]
    rows = table_rows(deck52, "| ties | Monte Carlo (10^6 games) |")
    page = rendered_pages()["games/high_low.md"]
    for ties, mean, se, *_ in rows:
        match = re.search(rf"([\d.]+e-\d+) \+- ([\d.]+e-\d+)\s+\(ties {ties}\)", page)
        assert match, ties
        written = re.fullmatch(r"(\d+)\.(\d+)e(-?\d+)", match.group(1))
        assert shows(written.groups(), float(mean)), (ties, match.group(0), mean)
        assert float(match.group(2)) == pytest.approx(float(se), rel=0.05), (ties, se)


def test_the_paired_games_are_quoted_only_in_their_own_table():
    """The ranks page quotes the paired games' means only in the paired table; a 13 x 4 mean of
    one policy elsewhere is the study's (docs/data/ranks52_monte_carlo.csv)."""
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            if re.search(r"\{\{\s*ranks52_paired\.\w+\.mean", line):
                assert line.startswith("|"), (page.name, line)
