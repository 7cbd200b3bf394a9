"""What the tests read out of the report's pages and the manual's tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.repository import ROOT


def page_data(path: Path) -> dict:
    """The JSON a report page's script renders (its tables and figures)."""
    text = path.read_text()
    found = re.search(r"<script type='application/json' id='gl-data'>(.*?)</script>", text, re.S)
    assert found, "no data block"
    return json.loads(found.group(1).replace("<\\/", "</"))


def ranks_table() -> dict[int, dict[str, float | int]]:
    """The ranks page's table of n types of 4 (docs/games/card_guessing_ranks52.md): n ->
    feasible states and the optimal, greedy and persistent values (12 decimals)."""
    page = (ROOT / "docs" / "games" / "card_guessing_ranks52.md").read_text()
    head = "| n | states | optimal | greedy | persistent |"
    lines = page[page.index(head) :].splitlines()[2:]
    table = {}
    for line in lines:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[int(cells[0])] = {
            "states": int(cells[1].replace(",", "")),
            "optimal": float(cells[2]),
            "greedy": float(cells[3]),
            "persistent": float(cells[4]),
        }
    return table
