"""``python -m pipeline.describe [FAMILY]`` (or ``guesslab describe``): a family's
parameters, strategies and result columns, in the words of the manual's parameter tables
(:mod:`solvers.kit.family_words`), without building the manual; without a family, the
families registered here.

Exit status: 0, or 2 for a family not registered here (one line naming it and the known
ones).
"""

from __future__ import annotations

import sys
import textwrap

from solvers import families, family_import_errors, get_family
from solvers.kit.family_words import family_doc, param_words
from solvers.params import plain_words
from solvers.registry import Family, TaskError

WIDTH = 88  # columns of the text
HELP = """\
usage: python -m pipeline.describe [FAMILY]   (or: guesslab describe [FAMILY])

A family's parameters, strategies and result columns, in the words of the manual's
parameter tables; without FAMILY, the families registered here.

Exit status: 0, or 2 for a family not registered here (one line naming it and the
known ones)."""


def described(fam: Family) -> str:
    """The family as text: its name and version, its description, its strategies, each
    parameter (default, meaning, accepted values, strategies, dtype), its result columns."""
    lines = [f"family {fam.name} (version {fam.version})", ""]
    doc = plain_words(family_doc(fam))
    lines += [textwrap.fill(par, WIDTH) for par in doc.split("\n\n") if par.strip()]
    if fam.strategies:
        names = [s + (" (default)" if s == fam.default_strategy else "") for s in fam.strategies]
        lines += ["", f"strategies (strategy): {', '.join(names)}"]
    else:
        lines += ["", "strategies: none (this family has no strategy parameter)"]
    if fam.own is not None:
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
        if fam.strategies:
            lines.append(_indented(f"strategies: {applies}"))
    lines += ["", "result columns:"]
    lines += [f"  {name} ({dtype})" for name, dtype in fam.columns.items()]
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
        print(f"error: {_shown(' '.join(argv[1:]))}: one family at a time", file=sys.stderr)
        return 2
    try:
        fam = get_family(argv[0])
    except TaskError:
        print(f"error: family {_shown(argv[0])}: unknown; known: {', '.join(families())}",
              file=sys.stderr)  # fmt: skip
        return 2
    print(described(fam))
    return 0


if __name__ == "__main__":
    sys.exit(main())
