"""The manual's notebooks shown on a page with their outputs: ``<!-- notebook: PATH -->``
(a path under docs/) becomes the notebook's cells, Markdown as it is, code in a Python block
and each cell's text output in a plain block, as the notebook last ran (tests execute it in
a real kernel and hold its stored outputs to what a fresh run prints)."""

from __future__ import annotations

import json
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent
MARKER = re.compile(r"<!--\s*notebook:\s*(\S+)\s*-->")
FENCE = "```"


def cell_text(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def output_text(output: dict) -> str:
    """A code cell's output as text: a stream as written, a result by its plain-text form,
    a display (the progress bar) on lines of its own."""
    if output.get("output_type") == "stream":
        text = cell_text(output.get("text", ""))
    elif output.get("output_type") == "display_data":
        text = cell_text(output.get("data", {}).get("text/plain", "")).rstrip("\n") + "\n"
    elif output.get("output_type") == "execute_result":
        text = cell_text(output.get("data", {}).get("text/plain", ""))
    elif output.get("output_type") == "error":
        text = f"{output.get('ename')}: {output.get('evalue')}"
    else:
        return ""
    return text


def cell_outputs(cell: dict) -> str:
    """A code cell's outputs as one text, as a terminal would leave it: a progress bar that
    redraws its line after a carriage return shows its last state."""
    text = "".join(output_text(o) for o in cell.get("outputs", []))
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def notebook_markdown(path: Path) -> str:
    """The notebook at ``path`` as Markdown: its cells in order, outputs after their code."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for cell in notebook["cells"]:
        source = cell_text(cell["source"]).strip("\n")
        if cell["cell_type"] == "markdown":
            parts.append(re.sub(r"^# ", "### ", source, flags=re.M))
        elif cell["cell_type"] == "code":
            parts.append(f"{FENCE}python\n{source}\n{FENCE}")
            shown = cell_outputs(cell).strip("\n")
            if shown:
                parts.append(f"{FENCE}text\n{shown}\n{FENCE}")
    return "\n\n".join(parts) + "\n"


def expand_notebooks(markdown: str) -> str:
    """``markdown`` with each ``<!-- notebook: PATH -->`` replaced by the notebook's cells."""
    return MARKER.sub(lambda m: notebook_markdown(DOCS / m.group(1)), markdown)
