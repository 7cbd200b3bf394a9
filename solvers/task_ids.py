"""A task's identity and seed: the deterministic id of a canonical task (the hash of its
family's version and the parameters a result depends on) and its random generator, seeded
from the same hash made with version :data:`SEED_VERSION` (the games a task draws do not
change with its family's version)."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from typing import Any

import numpy as np

from solvers.registry import Task, get_family

ID_LENGTH = 20  # hex digits of a task id


def identity_params(task: Task) -> Task:
    """The canonical task without execution knobs (:attr:`Rules.knob_names
    <solvers.family.Rules.knob_names>`), nor the parameters left out while None: what a
    result depends on."""
    rules = get_family(task["family"]).rules
    knobs, omitted = rules.knob_names, rules.omitted_if_none
    return {
        k: v for k, v in sorted(task.items()) if k not in knobs and not (v is None and k in omitted)
    }


def task_id(task: Task) -> str:
    """A deterministic id for a canonical task: hash of family, parameters, solver version.

    The hash is of ``json.dumps({"version": ..., "params": identity_params(task)},
    sort_keys=True, separators=(",", ":"), default=str)``, assembled here from each value's
    own encoding (the same text; :class:`solvers.grid.Grid` reuses the encodings across a grid).
    """
    pieces = [id_piece(k, v) for k, v in identity_params(task).items()]
    return _hashed_id(pieces, json_text(get_family(task["family"]).version))


def id_piece(key: str, value: Any) -> str:
    """``"key":value`` as the id's JSON holds it."""
    return f"{_json_str(key)}:{json_text(value)}"


def _hashed_id(pieces: list[str], version: str) -> str:
    """The id from the encoded ``"key":value`` pieces (in key order) and the version's JSON."""
    return _sha_id(id_json(pieces, version))


def id_json(pieces: list[str], version: str) -> str:
    """The JSON text an id hashes, from its ``"key":value`` pieces and the version's JSON."""
    return f'{{"params":{{{",".join(pieces)}}},"version":{version}}}'


def _sha_id(payload: str) -> str:
    """A task id: the first ID_LENGTH (20) hex digits of the SHA-256 of the id's JSON text."""
    return hashlib.sha256(payload.encode()).hexdigest()[:ID_LENGTH]


_JSON_ARGS: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "default": str}
_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


@functools.lru_cache(maxsize=4096)
def _json_str(text: str) -> str:
    return json.dumps(text)


def json_text(value: Any) -> str:
    """``value`` as json.dumps(value, **_JSON_ARGS) writes it, inside or outside a container."""
    kind = type(value)
    if value is None or kind is bool:
        return _JSON_CONSTANTS[value]
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)  # what json writes (-0.0 stays -0.0)
    if kind is str:
        return _json_str(value)
    if kind is list and all(type(v) is int for v in value):
        return f"[{','.join(map(int.__repr__, value))}]"
    return json.dumps(value, **_JSON_ARGS)


# The version a task's seed is hashed with, whatever its family's version now: a new version
# of a family draws the same games as the version before it (its Monte Carlo values differ
# only where its code changed, so two versions compare game for game), and every seed is
# the task id it was while each family's version was "1".
SEED_VERSION = "1"


def seed_id(task: Task) -> str:
    """The hash a canonical task's generator is seeded from: its :func:`task_id` as version
    :data:`SEED_VERSION` of its family would make it."""
    pieces = [id_piece(k, v) for k, v in identity_params(task).items()]
    return _hashed_id(pieces, json_text(SEED_VERSION))


def task_rng(task: Task) -> np.random.Generator:
    """A NumPy generator seeded from the task's :func:`seed_id` (Monte Carlo is reproducible
    per task, and across versions of its family)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed_id(task), 16)))
