"""The searches stored in a study folder, as the summary, the report and ``describe``
show them: each ``search/<name>.json`` headline a search wrote (:mod:`pipeline.search.outputs`)
read back checked, the summary's section on them, and the report's (its figures).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pipeline.outputs.page_text import esc

if TYPE_CHECKING:
    from pipeline.storage.study_folder import StudyFolder

MAX_HEADLINE = 16 * 1024 * 1024  # bytes of a search's headline file read back (~100 a trial)
HEADLINE_KEYS = {"name": str, "n_trials": int, "page": str, "plots": list, "params": list}


def search_headlines(study: StudyFolder) -> list[tuple[Path, dict[str, Any] | str]]:
    """Each search stored in the ``study`` folder (``search/<name>.json``), read back checked:
    (its file, its headline), or (its file, why it is left out) for a file that is not what
    a search writes (a link, a FIFO, too large, not JSON, keys missing or of another kind)."""
    folder = study.path / "search"
    if not folder.is_dir() or folder.is_symlink():
        return []
    found: list[tuple[Path, dict[str, Any] | str]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_HEADLINE:
                raise ValueError("not a search's headline file")
            headline = json.loads(path.read_bytes())
            wrong = [
                k for k, kind in HEADLINE_KEYS.items() if not isinstance(headline.get(k), kind)
            ]
            if wrong:
                raise ValueError(f"no {', '.join(wrong)} of a search's headline")
        except (OSError, ValueError) as exc:
            found.append((path, str(exc)))
            continue
        found.append((path, headline))
    return found


def searches_section(study: StudyFolder) -> list[str]:
    """The Markdown lines that head a study's summary with each search stored in its folder
    (``study``): its best beside the reference and the gap, its page and plots.  A headline
    file that is not what a search writes is named and left out."""
    lines = ["## Searches", ""]
    for path, headline in search_headlines(study):
        if isinstance(headline, str):
            lines += [f"- `search/{path.name}`: left out ({headline})", ""]
            continue
        best = headline.get("best")
        said = f"best {best}" if best else "no trial succeeded"
        name, n = headline["name"], headline["n_trials"]
        lines += [f"- **{name}** ({n} trials): {said}; [the search](search/{headline['page']})"]
        lines += [""] + [f"  ![{p}](search/{p})" for p in headline["plots"]] + [""]
    return lines if len(lines) > 2 else []


class Page(Protocol):
    """What the report's section on searches writes to: the page being assembled
    (:class:`pipeline.outputs.report.Page`, which imports this module)."""

    def add_html(self, fragment: str) -> None: ...

    def add_figure(self, title: str, figure: Any, note: str = "") -> None: ...


def add_searches(page: Page, study: StudyFolder) -> None:
    """The report's section on each search stored in the ``study`` folder: its best beside
    the reference and the gap, and the objective against each searched parameter."""
    found = search_headlines(study)
    if not found:
        return
    page.add_html("<h2>Searches</h2>")
    for path, headline in found:
        if isinstance(headline, str):
            page.add_html(f"<p class='note'><code>search/{esc(path.name)}</code>: left out "
                          f"({esc(headline)})</p>")  # fmt: skip
            continue
        best = headline.get("best") or "no trial succeeded"
        page.add_html(
            f"<p><strong>{esc(headline['name'])}</strong> ({headline['n_trials']} trials): "
            f"best {esc(best)}</p>"
        )
        for title, figure in search_figures(headline):
            page.add_figure(title, figure)


def search_figures(headline: dict[str, Any]) -> list[tuple[str, Any]]:
    """(title, Plotly figure) for each searched parameter of a search's headline: the
    objective against the parameter, every trial a point (its number and value on hover),
    the best marked, the reference a line."""
    import plotly.graph_objects as go

    points = [p for p in headline.get("points") or [] if isinstance(p, list) and len(p) == 3]
    column = str(headline.get("column", "value"))
    out = []
    for param in headline["params"]:
        xs = [p[1].get(param) if isinstance(p[1], dict) else None for p in points]
        fig = go.Figure(
            go.Scatter(
                x=xs,
                y=[p[2] for p in points],
                mode="markers",
                name="trials",
                text=[f"trial {p[0]}" for p in points],
                marker={"color": "#0072B2"},
            )  # fmt: skip
        )
        best = [i for i, p in enumerate(points) if p[0] == headline.get("best_trial")]
        if best:
            i = best[0]
            fig.add_trace(
                go.Scatter(
                    x=[xs[i]],
                    y=[points[i][2]],
                    mode="markers",
                    name=f"best (trial {points[i][0]})",
                    marker={"symbol": "star", "size": 16, "color": "#D55E00"},
                )  # fmt: skip
            )
        if isinstance(headline.get("reference"), int | float):
            fig.add_hline(
                y=headline["reference"], line_dash="dash", line_color="#009E73",
                annotation_text=str(headline.get("reference_name") or "reference"),
            )  # fmt: skip
        fig.update_layout(xaxis_title=param, yaxis_title=column)
        out.append((f"{headline['name']}: {column} against {param}", fig))
    return out
