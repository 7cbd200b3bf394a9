"""Numbers the manual quotes, each read from the one data file it comes from.

A page writes ``{{ FILE.KEY.FIELD:SPEC }}`` where it quotes a measured or computed value:
FILE names a data file under ``docs/data/`` (a YAML mapping, whose nested keys KEY and
FIELD lead to the value; or a CSV file, whose column ``key`` names the rows and whose other
columns are the fields), ``SPEC`` an optional Python format spec (``.4f``,
``,``, ``.3g``; ``duration`` writes seconds as ``2 min 47 s``).  :func:`expand_quotes`
replaces each with the value, formatted, at build time (docs/hooks.py), so a remeasurement
written to the data file updates every page that quotes it, and two pages cannot give the
same quantity two values.  An unknown file, key or field fails the build, naming the quote
and the page's text around it.  ``<!-- results -->`` draws the results page from
``docs/data/results.yaml``; :data:`COMPUTED` names the data the build reads from the code.

tests/test_quoted_values.py holds the rest of the rule: a value quoted through a data file
never also appears typed out on another page, the README's results are the file's, and the
data files agree with the
rows, scripts or code they were taken from where the suite can read or recompute those.
"""

from __future__ import annotations

import csv
import functools
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


def rendered(match: re.Match[str]) -> str:
    """A quote's text: its value in its format spec (``str`` without one; a fraction
    ``p/q`` with a spec gives its decimal)."""
    stem, path, spec = match.groups()
    got = value(stem, path)
    if spec == "duration":
        return duration(float(got))
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
    return QUOTE.sub(replace, markdown)


RESULTS = re.compile(r"<!--\s*results\s*-->")


def shown(value: Any) -> str:
    """A result's value as the results page shows it: a fraction with its decimal, a float
    to its last stored digit, an integer with thousands separators."""
    if isinstance(value, str) and "/" in value:
        from fractions import Fraction

        return f"{value} = {float(Fraction(value)):.12g}"
    if isinstance(value, float):
        return repr(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def results_section() -> str:
    """The results page's body: one section per entry of docs/data/results.yaml."""
    parts = []
    for key, r in data_file("results").items():
        parts.append(
            "\n".join(
                [
                    f"### {r['title']}",
                    "",
                    f"**{shown(r['value'])}** ([the game's page]({r['page']}); the data key "
                    f"`results.{key}`)",
                    "",
                    f"- **Computed:** {r['how']}.",
                    f"- **Checked:** {r['checked']}.",
                    f"- **Reproduce:** `{r['command']}`",
                    f"- **Cost:** {r['cost']}.",
                    "",
                ]
            )
        )
    return "\n".join(parts)


def quotes(markdown: str) -> list[tuple[str, str]]:
    """Each quote of ``markdown``: its source text and what it renders to."""
    return [(m.group(0), rendered(m)) for m in QUOTE.finditer(markdown)]
