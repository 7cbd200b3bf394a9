"""The text of guesslab's self-contained HTML pages (each study's report.html and the
index of the studies): escaped HTML, cells and data as JSON safe inside a ``<script>``, the
inlined assets (pipeline/assets/) and Plotly's JavaScript, and the page written into place.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.storage.safe_paths import write_replacing

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def esc(value: Any) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


def html_code(value: Any) -> str:
    """``value`` as HTML code, shown as typed."""
    return f"<code>{esc(str(value))}</code>"


def json_value(value: Any) -> Any:
    """A cell as JSON: NaN/None as null, infinities as "inf"/"-inf", numpy scalars as Python."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item() if getattr(value, "ndim", 0) == 0 else list(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def json_script(data: Any) -> str:
    """``data`` as JSON safe inside a <script> element."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


@functools.cache
def plotly_gz_base64() -> str:
    """Plotly's JavaScript (from the installed plotly package), gzip-compressed, base64."""
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), 6, mtime=0)).decode()


@functools.cache
def asset(name: str) -> str:
    """The text of one of the pages' inlined assets (pipeline/assets/NAME)."""
    return (ASSETS / name).read_text()


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a new temporary file renamed into place (never
    written through a link: pipeline.storage.safe_paths)."""
    return write_replacing(path, text.encode("utf-8"))
