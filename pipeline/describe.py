"""``python -m pipeline.describe [FAMILY | FOLDER]`` (or ``guesslab describe``): a family's
parameters, strategies and result columns, in the words of the manual's parameter tables
(:mod:`solvers.kit.family_words`), without building the manual; without a family, the
families registered here; given a study folder, what it stores
(:mod:`pipeline.describe_folder`).

Exit status: 0, or 2 for a family not registered here or a folder that is no study (one
line naming it and the known families).
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from solvers import families, family_import_errors, get_family
from solvers.kit.family_words import family_doc, param_words
from solvers.kit.safe_folders import kind
from solvers.params import plain_words
from solvers.registry import Family, TaskError

WIDTH = 88  # columns of the text
HELP = """\
usage: python -m pipeline.describe [FAMILY | FOLDER]   (or: guesslab describe ...)

A family's parameters, strategies and result columns, in the words of the manual's
parameter tables; without FAMILY, the families registered here.  Given a study folder
(one holding results/ or runs/), what it stores: per family its tasks and rows, the
family versions of its files, its strategies and their code; the runs and when; what
checkpoints/ and quarantine/ keep; its searches; the disk used.  It reads the folder
only, never follows a link and opens nothing but regular files.

Exit status: 0, or 2 for a family not registered here or a folder that is no study
(one line naming it and the known families)."""


def described(fam: Family) -> str:
    """The family as text: its name and version, its description, its strategies, each
    parameter (default, meaning, accepted values, strategies, dtype), its result columns."""
    lines = [f"family {fam.name} (version {fam.version})", ""]
    doc = plain_words(family_doc(fam))
    lines += [textwrap.fill(par, WIDTH) for par in doc.split("\n\n") if par.strip()]
    if fam.rules.strategies:
        names = [
            s + (" (default)" if s == fam.rules.default_strategy else "")
            for s in fam.rules.strategies
        ]
        lines += ["", f"strategies (strategy): {', '.join(names)}"]
    else:
        lines += ["", "strategies: none (this family has no strategy parameter)"]
    if fam.rules.own is not None:
        lines.append("  and strategies of one's own (a class named by _target_ in a study)")
    lines += ["", "parameters:"]
    for w in param_words(fam):
        applies = (
            "all"
            if w.strategies is None
            else ", ".join("strategies of one's own" if s == "own" else s for s in w.strategies)
        )
        lines.append(f"  {w.name} ({w.dtype}), default {plain_words(w.default)}")
        for label, text in (("meaning", w.meaning), ("accepts", w.accepts)):
            lines.append(_indented(f"{label}: {plain_words(text)}"))
        if fam.rules.strategies:
            lines.append(_indented(f"strategies: {applies}"))
    lines += ["", "result columns:"]
    lines += [f"  {name} ({dtype})" for name, dtype in fam.solver.columns.items()]
    return "\n".join(lines)


def _indented(text: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent="    ", subsequent_indent="      ")


def listing() -> str:
    """The families registered here, each with the first sentence of its description."""
    lines = ["families (python -m pipeline.describe FAMILY for one):"]
    for name in families():
        first = plain_words(family_doc(get_family(name))).split(". ")[0].split("\n\n")[0]
        lines.append(f"  {name}: {' '.join(first.split())}" if first else f"  {name}")
    return "\n".join(lines)


def _shown(value: str) -> str:
    """``value`` quoted for an error line, shortened (:func:`pipeline.config.short_repr`,
    imported only for an error: describing a family needs none of the config's models)."""
    from pipeline.config import short_repr

    return short_repr(value)


def is_study_folder(arg: str) -> bool:
    """Whether the argument names a study folder (a real folder holding a ``results`` or
    ``runs`` entry, or a study's real ``results`` folder) rather than a family."""
    path = Path(arg).expanduser()
    try:
        if kind(path) != "folder":
            return False
        if path.name == "results" and (
            kind(path.parent / "runs") is not None
            or any(name.startswith("family=") for name in os.listdir(path))
        ):
            return True
        return any(kind(path / name) is not None for name in ("results", "runs"))
    except OSError:  # a name too long for a path, a folder that cannot be listed
        return False


def is_folder(arg: str) -> bool:
    """Whether the argument names a real folder (a name too long for a path names none)."""
    try:
        return kind(Path(arg).expanduser()) == "folder"
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    """The command; its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if errors := family_import_errors():
        from pipeline.exit_lines import abbreviated  # only here: it imports much

        for where, why in errors.items():
            print(f"warning: {abbreviated(f'{where}: {why}')}", file=sys.stderr)
    if not argv or argv[0] in ("-h", "--help"):
        print(listing() if not argv else HELP)
        return 0
    if len(argv) > 1:
        print(f"error: {_shown(' '.join(argv[1:]))}: one family or study folder at a time",
              file=sys.stderr)  # fmt: skip
        return 2
    if argv[0] not in families() and is_study_folder(argv[0]):  # a family's name: the family
        from pipeline.describe_folder import describe_folder  # only here: it reads Parquet

        print(describe_folder(argv[0]))
        return 0
    try:
        fam = get_family(argv[0])
    except TaskError:
        if is_folder(argv[0]) or os.sep in argv[0]:  # a path: said as one
            why = "not a study folder (no results/ nor runs/ in it)" if is_folder(argv[0]) else (
                "no such folder")  # fmt: skip
            print(f"error: {_shown(argv[0])}: {why} and no family; known families: "
                  f"{', '.join(families())}", file=sys.stderr)  # fmt: skip
            return 2
        print(f"error: family {_shown(argv[0])}: unknown; known: {', '.join(families())}",
              file=sys.stderr)  # fmt: skip
        return 2
    print(described(fam))
    return 0


if __name__ == "__main__":
    sys.exit(main())
