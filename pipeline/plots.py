"""Plot helpers shared by the summaries (matplotlib, Agg backend, PNG files)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    ylabel: str,
    path: Path,
    errors: Sequence[float] | None = None,
) -> Path:
    """A horizontal-label bar chart saved as PNG at ``path``."""
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(labels) + 2), 3.6))
    yerr = None
    if errors is not None and any(e == e and e for e in errors):
        yerr = [e if e == e else 0.0 for e in errors]
    ax.bar(range(len(values)), values, yerr=yerr, color="tab:blue", capsize=4)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    lo = min(values)
    ax.set_ylim(bottom=max(0.0, lo - 0.15 * (max(values) - lo + 1e-9) - 0.05 * abs(lo)))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.4f}", ha="center", va="bottom", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
