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
