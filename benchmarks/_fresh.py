"""Run a Python snippet in a fresh process: what the benchmarks time without warm caches."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fresh_json(code: str, *args: object) -> tuple[dict, float]:
    """(the JSON the snippet prints last, the largest peak RSS in MiB of this process's
    children so far: the snippet's, unless an earlier child was larger)."""
    res = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return json.loads(res.stdout.strip().splitlines()[-1]), peak
