"""What ``python -m pipeline.reproduce`` found (:class:`Outcome`), its exit status, and the
table it prints: the counts, each value that differs and each task not reproducible here
(by its strategy and parameters, and its id), each file of the folder not used, and the
versions that stored the rows beside this machine's.

Exit status: 0 when every task chosen was recomputed and reproduces, and every file of the
folder was used; 1 when a compared row differs; 4 when every compared row reproduces but
not all was checked (a task not reproducible here, or a file of the folder not read or not
used); 3 when nothing could be compared; 2 on bad input; 130 when stopped by Ctrl-C.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.readback.compare_rows import Difference, shown
from pipeline.readback.stored_study import StoredStudy, path_text, row_names
from pipeline.running.provenance import code_version, package_versions
from pipeline.storage.locking import visible
from solvers.kit.words import counted

EXIT_REPRODUCED, EXIT_DIFFERS, EXIT_BAD, EXIT_STOPPED = 0, 1, 2, 130
EXIT_NOTHING_COMPARED = 3  # every task chosen is not reproducible here: nothing was shown
EXIT_PARTLY = 4  # what was compared reproduces, but a task or a file was not checked


@dataclass
class Outcome:
    """What a reproduction found, per stored task chosen."""

    study: StoredStudy
    chosen: int = 0
    reproduced: list[str] = field(default_factory=list)
    differs: list[Difference] = field(default_factory=list)
    not_here: dict[str, str] = field(default_factory=dict)  # task id -> why
    backend: str = ""
    into: Path | None = None

    @property
    def compared(self) -> bool:
        """Whether any row was compared (reproduced or not)."""
        return bool(self.reproduced or self.differs)

    @property
    def status(self) -> int:
        """0: every task chosen reproduced, every file used; 1: a row differs; 3: nothing
        could be compared; 4: what was compared reproduced, but not all was checked."""
        if self.differs:
            return EXIT_DIFFERS
        if not self.compared:
            return EXIT_NOTHING_COMPARED
        return EXIT_PARTLY if self.not_here or self.study.skipped else EXIT_REPRODUCED


def table_text(outcome: Outcome) -> str:
    """The report printed: counts, the differences and the tasks not reproducible here (each
    task by its strategy and parameters, and its id), the files of the folder not used, and
    the versions then (from the files' metadata) and now."""
    study = outcome.study
    where = outcome.into or "a temporary folder (removed)"
    lines = [
        f"reproduce {study.folder}: {counted(outcome.chosen, 'stored task')} chosen, "
        "recomputed on "
        f"cluster={outcome.backend} into {where}",
        f"  configs: {study.configs_from}",
        f"  reproduced: {len(outcome.reproduced)}",
        f"  differs: {len({d.task_id for d in outcome.differs})}",
        f"  not reproducible here: {len(outcome.not_here)}",
        f"  files not used: {len(study.skipped)}",
    ]
    if not outcome.compared:
        lines.append(
            "  nothing could be compared here: no task chosen is reproducible on this "
            "machine (why below), so nothing is shown to reproduce (exit 3)"
        )
    elif outcome.status == EXIT_PARTLY:
        unchecked = []
        if outcome.not_here:
            unchecked.append(f"{counted(len(outcome.not_here), 'task')} not reproducible here")
        if study.skipped:
            unchecked.append(f"{counted(len(study.skipped), 'file')} of the folder not used")
        lines.append(
            f"  not all was checked: {' and '.join(unchecked)} (below); what was compared "
            "reproduces (exit 4)"
        )
    names = row_names(study)
    if outcome.differs:
        rows = [(names.get(d.task_id, ""), visible(d.task_id, 80), visible(d.column, 80),
                 cell(d.stored, d.new), cell(d.new, d.stored))
                for d in outcome.differs]  # fmt: skip
        head = ("task", "id", "column", "stored", "new")
        lines += ["", "differs:", *columns(head, rows)]
    if outcome.not_here:
        rows = sorted(
            (names.get(t, ""), visible(t, 80), visible(why, 10**4))
            for t, why in outcome.not_here.items()
        )
        lines += ["", "not reproducible here:", *columns(("task", "id", "why"), rows)]
    if study.skipped:
        rows = [(path_text(path), visible(why, 10**4)) for path, why in sorted(study.skipped)]
        lines += ["", "files not used:", *columns(("file", "why"), rows)]
    lines += ["", "versions:", *columns(("", "then (stored)", "now"), versions(outcome))]
    return "\n".join(lines)


def cell(value: Any, other: Any) -> str:
    """A value that differs, for the table (:func:`~pipeline.readback.compare_rows.shown`), text
    quoted where the other value is not text (``'342'`` against ``342``), unprintable
    characters as escapes."""
    if isinstance(value, str) and other is not None and not isinstance(other, str):
        return visible(repr(value), 80)
    return visible(shown(value, other))


def columns(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as aligned text columns under ``head`` (the last column not padded)."""
    cells = [head, *rows]
    widths = [max(len(str(c[k])) for c in cells) for k in range(len(head) - 1)]
    return [
        "  "
        + "  ".join([*(str(c).ljust(w) for c, w in zip(row, widths, strict=False)), str(row[-1])])
        for row in cells
    ]


def versions(outcome: Outcome) -> list[tuple[str, str, str]]:
    """(what, its values then over the files compared, now): the code, Python, each package
    that shapes a value, the config folders a run was composed from (``--config-dir``).  A
    file's metadata is what it says: a value of another shape is not recorded, and text is
    shown with its unprintable characters as escapes."""
    metas = outcome.study.metadata
    packages = package_versions()

    def then(get: Callable[[dict], Any]) -> str:
        values = dict.fromkeys(visible(str(v), 80) for m in metas if (v := get(m)) is not None)
        return ", ".join(values) or "not recorded"

    def stored(m: dict) -> dict:
        return m["packages"] if isinstance(m.get("packages"), dict) else {}

    rows = [("code", then(lambda m: m.get("code_version")), code_version())]
    rows.append(("python", then(lambda m: m.get("python")), sys.version.split()[0]))
    for name in sorted(set(packages) | {str(p) for m in metas for p in stored(m)}):
        now = packages.get(name, "not recorded")
        rows.append((visible(name, 80), then(lambda m, n=name: stored(m).get(n)), now))
    rows.append(("--config-dir", then(config_dirs), "-"))
    return rows


def config_dirs(metadata: dict[str, Any]) -> str | None:
    """The ``--config-dir`` folders a file's run was composed from, or None if unrecorded."""
    sources = metadata.get("config_sources")
    if not isinstance(sources, list):
        return None
    given = [str(s.get("path")) for s in sources
             if isinstance(s, dict) and s.get("provider") == "command-line"]  # fmt: skip
    return ", ".join(given) or "none"
