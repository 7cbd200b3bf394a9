"""What a search leaves in the study folder beside its journal: ``search/<name>.md`` (the
best trial beside the reference and the gap, then every trial) and one plot a searched
parameter, ``search/<name>-<param>.png`` (every trial a point, the best marked, the
reference as a line).

The plots are drawn on a Figure of their own with the Agg canvas, in a style context, so a
caller's matplotlib (its backend, its settings) is left as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.search.result import SearchResult, best_text
from solvers.kit.atomic_files import replace_file

STYLE = {"font.size": 11, "axes.titlesize": 11, "axes.labelsize": 11, "legend.fontsize": 10}


def write_search(result: SearchResult) -> Path:
    """The search's page, plots and headline (``search/<name>.json``, which the study's
    summary puts at its top) written, each file whole or not at all; the page."""
    assert result.folder is not None
    folder = result.folder / "search"
    plots = [plot_param(result, p, folder / f"{result.name}-{p}.png") for p in result.space]
    page = folder / f"{result.name}.md"
    text = page_text(result, [p.name for p in plots])
    best = result.best
    headline = {
        "name": result.name,
        "n_trials": len(result.trials),
        "best": None if best is None else best_text(best, result),
        "page": page.name,
        "plots": [p.name for p in plots],
        "strategy": result.objective.strategy,
        "column": result.objective.column,
        "params": list(result.space),
        "reference": result.reference,
        "reference_name": result.reference_name,
        "best_trial": None if best is None else best.number,
        "points": [[t.number, t.params, t.value] for t in result.trials if t.value is not None],
    }
    data = json.dumps(headline, indent=1).encode()
    replace_file(folder / f"{result.name}.json", lambda fh: fh.write(data))
    return replace_file(page, lambda fh: fh.write(text.encode()))


MAX_HEADLINE = 16 * 1024 * 1024  # bytes of a search's headline file read back (~100 a trial)
HEADLINE_KEYS = {"name": str, "n_trials": int, "page": str, "plots": list, "params": list}


def search_headlines(study_dir: Path) -> list[tuple[Path, dict[str, Any] | str]]:
    """Each search stored in the study folder (``search/<name>.json``), read back checked:
    (its file, its headline), or (its file, why it is left out) for a file that is not what
    a search writes (a link, a FIFO, too large, not JSON, keys missing or of another kind)."""
    folder = study_dir / "search"
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


def searches_section(study_dir: Path) -> list[str]:
    """The Markdown lines that head a study's summary with each search stored in its folder:
    its best beside the reference and the gap, its page and plots.  A headline file that is
    not what a search writes is named and left out."""
    lines = ["## Searches", ""]
    for path, headline in search_headlines(study_dir):
        if isinstance(headline, str):
            lines += [f"- `search/{path.name}`: left out ({headline})", ""]
            continue
        best = headline.get("best")
        said = f"best {best}" if best else "no trial succeeded"
        name, n = headline["name"], headline["n_trials"]
        lines += [f"- **{name}** ({n} trials): {said}; [the search](search/{headline['page']})"]
        lines += [""] + [f"  ![{p}](search/{p})" for p in headline["plots"]] + [""]
    return lines if len(lines) > 2 else []


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


def page_text(result: SearchResult, plots: list[str]) -> str:
    """The Markdown of the search's page."""
    best = result.best
    lines = [f"# Search {result.name}", "", f"Objective: {result.objective.describe()}.", ""]
    if best is not None:
        lines += [f"**Best:** {best_text(best, result)}.", ""]
    lines += [f"![{p}]({p})" for p in plots] + [""]
    names = list(result.space)
    lines += [
        "| trial | " + " | ".join(names) + " | value | exact |",
        "|---" * (len(names) + 3) + "|",
    ]
    order = sorted(
        result.trials,
        key=lambda t: (t.value is None, -(t.value or 0) if result.objective.maximize else t.value),
    )
    for t in order:
        cells = [_cell(t.params.get(n)) for n in names]
        value = "failed" if t.value is None else f"{t.value:.12g}"
        exact = "" if t.exact is None else str(t.exact)
        lines.append(f"| {t.number} | " + " | ".join(cells) + f" | {value} | {exact} |")
    return "\n".join(lines) + "\n"


def plot_param(result: SearchResult, param: str, path: Path) -> Path:
    """The objective against ``param``: every trial a point, the best marked, the reference
    (the optimum) as a line."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    done = [t for t in result.trials if t.value is not None]
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(6.0, 3.6))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        xs = [_number(t.params.get(param)) for t in done]
        ax.plot(xs, [t.value for t in done], "o", color="#0072B2", alpha=0.6, label="trials")
        best = result.best
        if best is not None:
            ax.plot(
                [_number(best.params.get(param))],
                [best.value],
                "*",
                color="#D55E00",
                markersize=14,
                label=f"best (trial {best.number})",
            )
        if result.reference is not None:
            ax.axhline(
                result.reference, color="#009E73", linestyle="--", label=result.reference_name
            )
        ax.set_xlabel(param)
        ax.set_ylabel(result.objective.column)
        ax.set_title(f"{result.objective.strategy}: {result.objective.column} against {param}")
        ax.legend(loc="best")
        fig.tight_layout()
        return replace_file(path, lambda fh: fig.savefig(fh, format="png", dpi=150))


def _cell(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _number(value: Any) -> Any:
    return value if isinstance(value, int | float) else str(value)
