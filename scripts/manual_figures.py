"""Make the manual's figures from the studies themselves.

Each figure of the manual (docs/img/*.png) is a plot a study's summary draws: this script runs
those studies through the pipeline, exactly as ``python -m pipeline study=NAME`` does (into
``--outputs``, so tasks already stored there are not computed again), and copies each plot to
its place under docs/img/.  A figure may also take rows of studies too long to run here
(hours: the ranks figure's n = 10 and 11 come from ``ranks_exact``): the values it needs are
kept in a small file under docs/data/ (the ranks page's table), which joins the study's rows
(where both hold a value, they must agree); rows of the long studies in ``--outputs`` join
too.  The script then draws the figure itself.

Every figure is checked as it is saved (solvers/kit/summary_parts.py, figure_problems: text
at least 15 px at the page's 688 px, every axis labelled, at most 6 series an axes, none
hidden under another, no blank band): the script refuses one that fails (exit 1).

    python scripts/manual_figures.py                  # every figure (about 25 min on 2 cores)
    python scripts/manual_figures.py --quick          # all but the studies of over a minute
    python scripts/manual_figures.py --only gamma_sweep mastermind_gaps
    python scripts/manual_figures.py --list           # the figures, their studies and costs

The costs are wall times of a fresh run on the 2-core machine of the benchmarks page.
Exit status: 0 done, 1 a study failed (its output is printed), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS_IMG = ROOT / "docs" / "img"


def study_times() -> dict[str, float]:
    """Each shipped study's wall time, in seconds, as docs/data/study_times.yaml records it."""
    import yaml

    path = ROOT / "docs" / "data" / "study_times.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["wall_s"]


@dataclass(frozen=True)
class Figure:
    name: str  # the file under docs/img/ (without .png)
    study: str  # the study that draws it
    plot: str  # the PNG its summary writes under <outputs>/<study>/summary/
    shows: str  # what a reader sees
    # studies whose rows, where --outputs already holds them, join the study's in this figure;
    # they take hours, so the script does not run them (run them first: their command)
    stored: tuple[str, ...] = ()
    # "module:function", function(rows, path), drawing the figure from the rows of the study
    # and the stored ones; empty: the study's own plot is copied
    draw: str = ""
    # a CSV of rows (path under the project) that joins the study's: values of the long
    # studies, kept so that the figure needs no hours of solving
    data: str = ""

    @property
    def seconds(self) -> float:
        """Wall time of a fresh run of the study (docs/data/study_times.yaml, the usage page's)."""
        return study_times()[self.study]


FIGURES = (
    Figure(
        "gamma_sweep",
        "gamma_sweep",
        "card_guessing_gamma_sweep.png",
        "yes/no guessing: the entropy-weighted strategy against greedy and optimal, over gamma",
    ),
    Figure(
        "entropy_grid",
        "entropy_grid",
        "card_guessing_entropy_grid.png",
        "yes/no guessing: the best info score over the Sharma-Mittal (r, t) plane",
    ),
    Figure(
        "ranks",
        "ranks52",
        "card_guessing_ranks.png",
        "n types of 4 cards: optimum, greedy and persistent against n, fits at 13",
        stored=("ranks_exact",),
        draw="solvers.card_guessing.summary.ranks52:draw_ranks",
        data="docs/data/ranks_4_cards.csv",
    ),
    Figure(
        "high_low_p_perfect",
        "high_low",
        "high_low_p_perfect.png",
        "higher/lower with distinct cards: P(every call right) against n",
    ),
    Figure(
        "high_low_decks",
        "high_low",
        "high_low_decks.png",
        "higher/lower on real decks: P(every call right) per deck and tie rule",
    ),
    Figure(
        "high_low_tie_rules",
        "high_low_full_deck",
        "high_low_tie_rules.png",
        "higher/lower on the 52-card deck: optimal play against the majority rule, per tie rule",
    ),
    Figure(
        "mastermind_gaps",
        "mastermind",
        "mastermind_gaps.png",
        "Mastermind: each heuristic's expected guesses over perfect play, per jar",
    ),
    Figure(
        "triples_win",
        "triples",
        "triples_win.png",
        "three of a kind: P(triples before a quartet) per deck",
    ),
    Figure(
        "triples_equilibrium",
        "triples_equilibrium",
        "triples_equilibrium.png",
        "three of a kind: the adaptive chain's stationary level",
    ),
    Figure(
        "hand_guessing_histograms",
        "hand_guessing",
        "hand_guessing_histograms.png",
        "hand guessing: guesses per game, per strategy",
    ),
)
QUICK_SECONDS = 60  # --quick leaves out studies slower than this


def chosen(only: list[str] | None, quick: bool) -> list[Figure]:
    """The figures asked for; SystemExit(2) naming an unknown one and the valid names."""
    names = [f.name for f in FIGURES]
    for name in only or []:
        if name not in names:
            print(f"error: unknown figure {name!r}; valid: {', '.join(names)}", file=sys.stderr)
            raise SystemExit(2)
    figs = [f for f in FIGURES if only is None or f.name in only]
    return [f for f in figs if not quick or f.seconds <= QUICK_SECONDS]


def run_study(study: str, outputs: Path, cluster: str) -> None:
    """``python -m pipeline study=STUDY`` into ``outputs``; SystemExit(1) if it fails."""
    cmd = [
        sys.executable,
        "-m",
        "pipeline",
        f"study={study}",
        f"paths.outputs={outputs}",
        f"cluster={cluster}",
        "run.progress=false",
    ]
    print("$ python " + " ".join(cmd[1:]), flush=True)
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        raise SystemExit(1)


def stored_rows(fig: Figure, outputs: Path):
    """The rows in ``outputs`` of ``fig``'s study and its ``stored`` studies (one DataFrame),
    and the stored studies that held none."""
    import pandas as pd

    from pipeline import load_results

    frames, absent = [], []
    for study in (fig.study, *fig.stored):
        rows = load_results(outputs / study)  # no rows where the folder is missing
        if not rows.empty:
            frames.append(rows)
        elif study != fig.study:
            absent.append(study)
    if fig.data:
        frames.append(pd.read_csv(ROOT / fig.data, dtype={"deck": str, "tie_break": str}))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), absent


def draw_with_stored(fig: Figure, outputs: Path, dest: Path) -> list[str]:
    """Draw ``fig`` at ``dest`` with its ``draw`` function from :func:`stored_rows`; the
    stored studies that held no rows (the figure goes without them)."""
    import importlib

    rows, absent = stored_rows(fig, outputs)
    module, function = fig.draw.split(":")
    getattr(importlib.import_module(module), function)(rows, dest)
    return absent


def make(figs: list[Figure], outputs: Path, img: Path, cluster: str) -> list[Path]:
    """Run each figure's study once and copy its plots to ``img`` (or draw them from the rows
    of the study and the stored ones); the files written."""
    img.mkdir(parents=True, exist_ok=True)
    written = []
    for study in dict.fromkeys(f.study for f in figs):
        run_study(study, outputs, cluster)
        for fig in (f for f in figs if f.study == study):
            dest = img / f"{fig.name}.png"
            if fig.draw:
                for absent in draw_with_stored(fig, outputs, dest):
                    if fig.data:  # its values are kept in the data file
                        print(f"  {dest.name}: the values of study {absent} from {fig.data}")
                        continue
                    print(
                        f"  note: no rows of study {absent} in {outputs}: {dest.name} goes "
                        f"without them (python -m pipeline study={absent} "
                        f"paths.outputs={outputs} adds them; it takes hours)"
                    )
            else:
                src = outputs / study / "summary" / fig.plot
                if not src.is_file():
                    said = f"error: study {study} drew no {fig.plot} (in {src.parent})"
                    print(said, file=sys.stderr)
                    raise SystemExit(1)
                shutil.copyfile(src, dest)
            check, _ = saved_check(dest)
            if check != "ok":
                said = check or "no check in the PNG (not saved by summary_parts.save_figure)"
                print(f"error: {dest.name} is not fit for the manual: {said}", file=sys.stderr)
                raise SystemExit(1)
            written.append(dest)
            print(f"  {dest.relative_to(img.parent) if img.parent in dest.parents else dest}")
    return written


def saved_check(path: Path):
    """What the figure's check found when it was saved, and its facts (summary_parts)."""
    from solvers.kit.summary_parts import saved_check as read

    return read(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these figures only")
    parser.add_argument("--quick", action="store_true", help="skip studies over a minute")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    parser.add_argument("--outputs", type=Path, default=ROOT / "outputs", help="the store")
    parser.add_argument("--img", type=Path, default=DOCS_IMG, help="where the PNGs go")
    parser.add_argument("--cluster", default="local", help="cluster config (local, sync)")
    args = parser.parse_args(argv)
    figs = chosen(args.only, args.quick)
    if args.list:
        for f in figs:
            print(f"{f.name:26} study={f.study:20} ~{f.seconds:>5g} s  {f.shows}")
        return 0
    make(figs, args.outputs.resolve(), args.img.resolve(), args.cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())
