"""What sealing and checking checkpoint pieces costs (solvers/kit/checkpoints.py), on a ranked
solve's kept checkpoint folder (card_guessing/uniform_deck/out_of_core.py).

    python benchmarks/bench_ranked_layers.py --types 10 --modes layers --workers 2 \\
        --folder /work/runs/r10 --budget 4e9          # the solve; its folder is kept
    python benchmarks/bench_seals.py /work/runs/r10/task [--cold]

Prints, as JSON lines:

- ``sealing``: per layer below the last, from the counts the solve committed: the layer's
  CPU seconds (its chunks, every worker) and wall seconds, the wall seconds of committing its
  values (24 B a rank) and choices (1 B a rank): fsync, rename and seal, and of those the
  seconds spent hashing them (XXH3-128) for the seals; totals and shares.
- ``resume``: the wall seconds of checking every piece a resume at layer 0 reads (layer 0's
  values, every layer's choices and counts, the last layer's T and log A), with the page
  cache as the solve left it and, with ``--cold`` (root: writes /proc/sys/vm/drop_caches),
  after dropping it; bytes read and GB/s.
- ``hash``: XXH3-128 of the largest file from the page cache, GB/s on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solvers.card_guessing.uniform_deck import out_of_core  # noqa: E402
from solvers.kit.checkpoints import Checkpoints  # noqa: E402
from solvers.kit.seals import file_digest  # noqa: E402


def sealing(folder: Path) -> dict:
    layers = []
    for path in sorted(folder.glob("count-*")):
        count = json.loads(path.read_text())
        if "hash_s" in count or "seal_s" in count:  # seal_s: commit and hash, not apart
            count.setdefault("commit_s", count.get("seal_s"))
            count.setdefault("hash_s", count.get("seal_s"))
            layers.append({"layer": int(path.name[-3:]), **count})
    cpu = sum(x["cpu_s"] for x in layers)
    wall = sum(x["wall_s"] for x in layers)
    hashing = sum(x["hash_s"] for x in layers)
    commit = sum(x["commit_s"] for x in layers)
    return {
        "what": "sealing",
        "layers": len(layers),
        "layer_cpu_s": round(cpu, 1),
        "layer_wall_s": round(wall, 1),
        "commit_s": round(commit, 2),
        "hash_s": round(hashing, 2),
        "hash_share_of_cpu": round(hashing / cpu, 4) if cpu else None,
        "hash_share_of_wall": round(hashing / wall, 4) if wall else None,
        "worst_layer_share_of_wall": round(max(x["hash_s"] / x["wall_s"] for x in layers), 4),
        "per_layer": [
            {k: round(x[k], 3) for k in ("layer", "cpu_s", "wall_s", "commit_s", "hash_s")}
            for x in layers
        ],
    }


def drop_caches() -> bool:
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
        return True
    except OSError:
        return False


def resume(folder: Path, cold: bool) -> dict:
    store = Checkpoints(folder, root=folder.parent)
    n = max(int(p.name[-3:]) for p in folder.glob("count-*"))
    nbytes = sum(
        f.stat().st_size
        for f in folder.iterdir()
        if f.is_file()
        and f.name.startswith(("layer-000", f"layer-{n:03d}", "best-", "count-", "last-t"))
    )
    dropped = drop_caches() if cold else False
    lines: list[str] = []
    wall = time.perf_counter()
    start = out_of_core.resume_point(store, n, lines.append)
    wall = time.perf_counter() - wall
    return {
        "what": "resume",
        "cache": "dropped" if dropped else ("not dropped (no permission)" if cold else "warm"),
        "resume_at": start,
        "failed": lines,
        "bytes": nbytes,
        "wall_s": round(wall, 2),
        "GB_per_s": round(nbytes / wall / 1e9, 2),
    }


def hash_rate(folder: Path) -> dict:
    largest = max((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.stat().st_size)
    file_digest(largest)  # into the page cache
    wall = time.perf_counter()
    size, _ = file_digest(largest)
    wall = time.perf_counter() - wall
    return {"what": "hash", "file": largest.name, "bytes": size,
            "GB_per_s": round(size / wall / 1e9, 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a ranked solve's kept checkpoint folder")
    parser.add_argument("--cold", action="store_true", help="also check after dropping caches")
    args = parser.parse_args()
    print(json.dumps(sealing(args.folder)))
    print(json.dumps(resume(args.folder, cold=False)))
    if args.cold:
        print(json.dumps(resume(args.folder, cold=True)))
    print(json.dumps(hash_rate(args.folder)))


if __name__ == "__main__":
    main()
