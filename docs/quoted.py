"""Numbers the manual quotes, each read from the one data file it comes from.

A page writes ``{{ FILE.KEY.FIELD:SPEC }}`` where it quotes a measured or computed value:
FILE names a data file under ``docs/data/`` (a YAML mapping, whose nested keys KEY and
FIELD lead to the value; or a CSV file, whose column ``key`` names the rows and whose other
columns are the fields), ``SPEC`` an optional Python format spec (``.4f``,
``,``, ``.3g``; ``duration`` writes seconds as ``2 min 47 s``; ``checked`` writes a float to
the digits its check supports, read from the ``agreement`` beside it).  :func:`expand_quotes`
replaces each with the value, formatted, at build time (docs/hooks.py), so a remeasurement
written to the data file updates every page that quotes it, and two pages cannot give the
same quantity two values.  An unknown file, key or field fails the build, naming the quote
and the page's text around it.  ``<!-- results -->`` draws the results page from
``docs/data/results.yaml`` (the results no source publishes, then those reproduced), and
``<!-- results-list -->`` the short list of the new ones that the home page shows,
``<!-- plan-estimates -->`` the benchmarks page's table of ``stage=plan``'s estimates against
measured runs (``docs/data/plan_estimates.yaml``);
:data:`COMPUTED` names the data the build reads from the code.

tests/test_quoted_values.py holds the rest of the rule: a value quoted through a data file
never also appears typed out on another page, the README's results are the file's, and the
data files agree with the
rows, scripts or code they were taken from where the suite can read or recompute those.
"""

from __future__ import annotations

import csv
import functools
import math
import re
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data"
QUOTE = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\.([A-Za-z0-9_.\-]+?)(?::([^}\s]*))?\s*\}\}")


class QuoteError(KeyError):
    """A quote names a data file, key or field that does not exist."""

    def __str__(self) -> str:
        return str(self.args[0])


def ranked_cost_model() -> dict[str, Any]:
    """The ``stage=plan`` cost model of ranked tasks (tasks/ranked_tasks.py) read at the decks
    the manual quotes: CPU seconds of the optimum of n types of 4 (``n8``...``n11``, with the
    error against the fitted run of docs/data/ranked_out_of_core.yaml, in percent), and 13 x
    4's CPU-hours for a policy, its last layer and the three policies sharing it."""
    from solvers.card_guessing.tasks.ranked_tasks import estimated_seconds, last_layer_seconds

    def seconds(n: int) -> float:
        task = {"deck": [4] * n, "strategy": "optimal", "method": "ranked"}
        return estimated_seconds(task)

    measured = data_file("ranked_out_of_core")["fitted"]
    out: dict[str, Any] = {}
    for n in (8, 9, 10, 11):
        model, cpu = seconds(n), measured[f"n{n}"]["cpu_s"]
        out[f"n{n}"] = {"model_s": model, "error_pct": 100 * (model - cpu) / cpu}
    policy, last = seconds(13), last_layer_seconds([4] * 13)
    out["full"] = {
        "policy_hours": policy / 3600,
        "last_layer_hours": last / 3600,
        "three_hours": (3 * policy - 2 * last) / 3600,
    }
    return out


# data files computed from the code when the manual is built (a value, not a copy of one)
COMPUTED = {"ranked_cost_model": ranked_cost_model}


@functools.cache
def data_file(stem: str) -> dict[str, Any]:
    """``docs/data/<stem>.yaml`` as a mapping, or ``<stem>.csv`` as {key: {column: value}}
    (numbers parsed as int or float, empty cells as None), or a mapping of :data:`COMPUTED`."""
    if stem in COMPUTED:
        return COMPUTED[stem]()
    yaml_path, csv_path = DATA / f"{stem}.yaml", DATA / f"{stem}.csv"
    if yaml_path.is_file():
        return yaml.safe_load(yaml_path.read_text(encoding="utf-8")) or {}
    if csv_path.is_file():
        with csv_path.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        if rows and "key" in rows[0]:
            return {row["key"]: {k: number(v) for k, v in row.items()} for row in rows}
        raise QuoteError(f"docs/data/{stem}.csv has no column 'key' to quote its rows by")
    raise QuoteError(f"no data file docs/data/{stem}.yaml or .csv")


def number(text: str) -> Any:
    """A CSV cell as int, float, None (empty) or the text itself."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def value(stem: str, path: str) -> Any:
    """The value at the dotted ``path`` in data file ``stem`` (QuoteError naming the part
    missing)."""
    node: Any = data_file(stem)
    walked = stem
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            known = ", ".join(sorted(map(str, node))) if isinstance(node, dict) else "a value"
            raise QuoteError(f"{walked} has no {part!r} (it has: {known})")
        node = node[part]
        walked += f".{part}"
    if isinstance(node, dict | list):
        raise QuoteError(f"{walked} is not a value but a {type(node).__name__}")
    return node


def duration(seconds: float) -> str:
    """Seconds in words as the manual writes a wall time: ``6.5 s``, ``2 min 47 s``,
    ``15 min`` (spec ``duration``)."""
    if seconds < 60:
        return f"{seconds:g} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def checked_digits(number: float, agreement: float) -> str:
    """``number`` to the digits a relative agreement of ``agreement`` supports: its last
    digit is the place of ``agreement * |number|`` (1e-12 relative on 15.53: 11 decimals),
    in scientific notation below 1e-4 (``2.98018533104e-8``)."""
    places = -math.floor(math.log10(agreement * abs(number)))
    if abs(number) >= 1e-4:
        return f"{number:.{max(places, 0)}f}"
    significant = places + math.floor(math.log10(abs(number)))
    mantissa, exponent = f"{number:.{significant}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def rendered(match: re.Match[str]) -> str:
    """A quote's text: its value in its format spec (``str`` without one; a fraction
    ``p/q`` with a spec gives its decimal; ``checked``: the digits the ``agreement`` beside the
    value supports)."""
    stem, path, spec = match.groups()
    got = value(stem, path)
    if spec == "duration":
        return duration(float(got))
    if spec == "checked":  # the agreement is looked up first: a value without one is refused
        parent = path.rpartition(".")[0]
        agreement = float(value(stem, f"{parent}.agreement"))
        return checked_digits(float(got), agreement)
    if spec and isinstance(got, str) and "/" in got:  # a fraction's decimal, to the spec
        from fractions import Fraction

        got = float(Fraction(got))
    return format(got, spec) if spec else str(got)


def expand_quotes(markdown: str, page: str = "") -> str:
    """``markdown`` with every ``{{ FILE.KEY.FIELD:SPEC }}`` replaced by its value."""

    def replace(match: re.Match[str]) -> str:
        try:
            return rendered(match)
        except (QuoteError, ValueError) as exc:
            where = markdown[max(0, match.start() - 60) : match.end()].replace("\n", " ")
            raise QuoteError(f"{page or 'page'}: {match.group(0)} ({exc}) in '...{where}'") from exc

    markdown = RESULTS.sub(lambda _: results_section(), markdown)
    markdown = RESULTS_LIST.sub(lambda _: results_list(page), markdown)
    markdown = PLAN_ESTIMATES.sub(lambda _: plan_estimates_table(), markdown)
    return QUOTE.sub(replace, markdown)


RESULTS = re.compile(r"<!--\s*results\s*-->")
RESULTS_LIST = re.compile(r"<!--\s*results-list\s*-->")
PLAN_ESTIMATES = re.compile(r"<!--\s*plan-estimates\s*-->")


def plan_estimates_table() -> str:
    """The table of docs/data/plan_estimates.yaml: per measured study, ``stage=plan``'s
    estimate (CPU, and wall on an idle machine) beside the run's CPU and wall time, their
    ratio and the load, and the warm-up run's wall and CPU time (kernels compiled as needed);
    then the studies not measured, with why."""
    found = data_file("plan_estimates")
    rows = [
        "| study | tasks | estimate: CPU | measured: CPU | ratio | estimate: wall, idle "
        "| measured: wall | load before, after | warm-up run: wall, CPU |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, s in found["studies"].items():
        first = s["first_run"]
        first = "not run" if first is None else f"{first['wall_s']:g} s, {first['cpu_s']:g} s"
        rows.append(
            f"| `{name}` | {s['tasks']:,} | {s['estimate_cpu_s']:g} s | {s['cpu_s']:g} s "
            f"| {s['ratio']:.2f} | {s['estimate_wall_s']:g} s | {s['wall_s']:g} s "
            f"| {s['load'][0]:.1f}, {s['load'][1]:.1f} | {first} |"
        )
    others = "; ".join(f"`{name}` ({why})" for name, why in found["not_measured"].items())
    return "\n".join(rows) + f"\n\nNot measured: {others}.\n"


def shown(r: dict[str, Any]) -> str:
    """A result's value as the pages show it: a fraction with its decimal, a float to the
    digits its check supports (its ``agreement``), an integer with thousands separators."""
    got = r["value"]
    if isinstance(got, str) and "/" in got:
        from fractions import Fraction

        return f"{got} = {float(Fraction(got)):.10f}"
    if isinstance(got, float):
        return checked_digits(got, r["agreement"])
    return f"{got:,}" if isinstance(got, int) else str(got)


def results_of(claim: str) -> dict[str, dict[str, Any]]:
    """The entries of docs/data/results.yaml whose ``claim`` is ``claim`` (``new`` or
    ``reproduced``), in the file's order."""
    return {key: r for key, r in data_file("results").items() if r["claim"] == claim}


def results_section() -> str:
    """The results page's body: a section per new result of docs/data/results.yaml, then
    one per result a source published and guesslab reproduced."""
    parts = ["## New: values no source known here publishes", ""]
    for key, r in results_of("new").items():
        parts += result_entry(key, r)
    parts += [
        "## Reproduced: values a source published",
        "",
        "Values guesslab computed again and found as published; they are the sources', not new.",
        "",
    ]
    for key, r in results_of("reproduced").items():
        parts += result_entry(key, r)
    return "\n".join(parts)


def result_entry(key: str, r: dict[str, Any]) -> list[str]:
    """One result's section: its value, how it was computed and checked, the command that
    computes it and what that costs."""
    published = [f"- **Published:** {r['source']}."] if r["claim"] == "reproduced" else []
    return [
        f"### {r['title']}",
        "",
        f"**{shown(r)}** ([the game's page]({r['page']}); the data key `results.{key}`)",
        "",
        *published,
        f"- **Computed:** {r['how']}.",
        f"- **Checked:** {r['checked']}.",
        f"- **Reproduce:** `{r['command']}`",
        f"- **Cost:** {r['cost']}.",
        "",
    ]


def results_list(page: str) -> str:
    """The new results as a Markdown list (title, value, link to its game's page), with the
    links written relative to ``page``."""
    depth = page.count("/")
    up = "../" * depth
    lines = [
        f"- {r['title']}: **{shown(r)}** ([{r['game']}]({up}{r['page']}))"
        for r in results_of("new").values()
    ]
    return "\n".join(lines)


def quotes(markdown: str) -> list[tuple[str, str]]:
    """Each quote of ``markdown``: its source text and what it renders to."""
    return [(m.group(0), rendered(m)) for m in QUOTE.finditer(markdown)]
