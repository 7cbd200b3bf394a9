"""The Sharma-Mittal entropy family H_{r,t}, shared by every game family (Hofer & Nelson 2016,
3.2.3).

For a distribution P, order ``r >= 0`` and degree ``t >= 0``::

    H_{r,t}(P) = [1 - (sum_i p_i^r)^((t-1)/(r-1))] / (t-1)

Every value is computed through the Renyi entropy of order r (in nats),
``R_r = log(sum_i p_i^r) / (1 - r)``, as ``H = -expm1(-(t-1) R_r) / (t-1)``, which has no
cancellation near t = 1 and equals ``R_r`` at t = 1 exactly.  ``R_r`` itself is computed
without cancellation near r = 1 (``log1p(sum_i p_i expm1((r-1) log p_i)) / (1-r)``), with a
max shift for large r, and by its limits at r = 0 (log of the support size), r = 1 (Shannon)
and r = infinity (-log max p).

Named members (Crupi et al. 2018 map them onto the (r, t) plane; Hofer & Nelson (2016) uses the
family
without naming them): see :data:`PRESETS` for single points and :data:`FAMILIES` for the
one-parameter families (``"renyi:2"`` is Renyi of order 2, ``"tsallis:3"`` Tsallis of
order 3, ...).

Units: ``log_base`` divides every value by ``ln(log_base)``.  For t = 1 (the logarithmic
members: Shannon, Renyi, Hartley, min-entropy) that is the usual change of unit (2: bits);
for t != 1 the value is rescaled by the same constant, which keeps H continuous in t across
t = 1 in every unit.  Use the default (nats) to get the textbook non-logarithmic forms such as
Gini-Simpson ``1 - sum p^2`` at (2, 2).

t = infinity is refused: H_{r,t} -> 0 for every distribution as t -> infinity, so it carries
no information.  r = infinity is allowed (the min-entropy limit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

Order = float  # r
Degree = float  # t
Point = tuple[Order, Degree]

PRESETS: dict[str, Point] = {
    "shannon": (1.0, 1.0),
    "hartley": (0.0, 1.0),  # log of the support size
    "origin": (0.0, 0.0),  # support size - 1
    "quadratic": (2.0, 2.0),  # Gini-Simpson index 1 - sum p^2 (Tsallis of order 2)
    "gini_simpson": (2.0, 2.0),
    "collision": (2.0, 1.0),  # Renyi of order 2: -log sum p^2
    "min_entropy": (math.inf, 1.0),  # -log max p (Renyi of order infinity)
    "bayes_error": (math.inf, 2.0),  # 1 - max p (error entropy)
}


def preset_name(r: Order, t: Degree) -> str | None:
    """The name of the named point (r, t) (the first of :data:`PRESETS` there), or None."""
    return next((name for name, point in PRESETS.items() if point == (r, t)), None)


FAMILIES: dict[str, Callable[[float], Point]] = {
    "renyi": lambda r: (r, 1.0),
    "tsallis": lambda q: (q, q),
    "arimoto": lambda r: (r, 2.0 - 1.0 / r),  # r/(r-1) [1 - (sum p^r)^(1/r)], r > 1/2
    "power": lambda r: (r, 2.0),  # 1 - (sum p^r)^(1/(r-1))
    "gaussian": lambda t: (1.0, t),  # [1 - exp(-(t-1) H_Shannon)] / (t-1)
}

_NEAR_ONE = 0.5  # |r - 1| below this uses the expm1/log1p form of the Renyi entropy


# ------------------------------------------------------------------------ parameter checks


# What each check accepts, in words (literal values in backticks): the manual's parameter
# tables print them (solvers.params.described) and the checks' messages say them.
ORDER_WORDS = "a number of at least 0 (`inf` allowed)"
DEGREE_WORDS = "a finite number of at least 0"
LOG_BASE_WORDS = "a finite number above 0, other than 1"


def as_order(value: object) -> Order:
    """``value`` as an order r >= 0 (infinity allowed); the reason is raised as ValueError."""
    r = _as_number(value)
    if math.isnan(r) or r < 0:
        raise ValueError(f"the order r must be {_plain(ORDER_WORDS)}")
    return r


def as_degree(value: object) -> Degree:
    """``value`` as a finite degree t >= 0; the reason is raised as ValueError."""
    t = _as_number(value)
    if math.isnan(t) or t < 0 or math.isinf(t):
        raise ValueError(f"the degree t must be {_plain(DEGREE_WORDS)} (H -> 0 as t -> infinity)")
    return t


def as_log_base(value: object) -> float:
    """``value`` as a logarithm base: finite, > 0 and != 1."""
    b = _as_number(value)
    if not math.isfinite(b) or b <= 0 or b == 1:
        raise ValueError(f"the log base must be {_plain(LOG_BASE_WORDS)}")
    return b


def _plain(words: str) -> str:
    return words.replace("`", "")


def _as_number(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError("must be a number, not a bool")
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"must be a number, got {value!r}") from None


def checked_point(r: object, t: object, log_base: object = math.e) -> tuple[float, float, float]:
    """(r, t, log_base) checked; a bad value raises ValueError naming its key."""
    out = []
    for key, value, check in (
        ("entropy_r", r, as_order),
        ("entropy_t", t, as_degree),
        ("log_base", log_base, as_log_base),
    ):
        try:
            out.append(check(value))
        except ValueError as exc:
            raise ValueError(f"{key}={value!r}: {exc}") from None
    return out[0], out[1], out[2]


def preset_names() -> tuple[str, ...]:
    """Every accepted preset name: the points, and the families as ``"<family>:<order>"``."""
    return tuple(PRESETS) + tuple(f"{f}:<order>" for f in FAMILIES)


def preset(name: str) -> Point:
    """(r, t) of a named member, e.g. ``"shannon"`` or ``"renyi:2"``; unknown names list all."""
    key = str(name).strip().lower()
    if key in PRESETS:
        return PRESETS[key]
    family, _, order = key.partition(":")
    if family in FAMILIES and order:
        return _family_point(name, family, order)
    raise ValueError(f"unknown entropy preset {name!r}; valid: {', '.join(preset_names())}")


def _family_point(name: str, family: str, order: str) -> Point:
    """(r, t) of ``family`` at ``order``; a bad order raises ValueError."""
    try:
        value = float(order)
    except ValueError:
        value = math.nan
    low = 0.5 if family == "arimoto" else 0.0
    if not value >= low:
        raise ValueError(f"entropy preset {name!r}: the order must be a number >= {low}")
    try:
        r, t, _ = checked_point(*FAMILIES[family](value))
    except ValueError as exc:
        raise ValueError(f"entropy preset {name!r}: {exc}") from None
    return r, t


# ---------------------------------------------------------------------------- the entropy


def sharma_mittal(
    p: Sequence[float] | np.ndarray,
    r: float,
    t: float,
    log_base: float = math.e,
    *,
    normalize: bool = False,
) -> float:
    """H_{r,t}(p) in units of ``log_base``; p sums to 1 (within 1e-9) unless ``normalize``."""
    r, t, log_base = checked_point(r, t, log_base)
    w = np.asarray(p, dtype=float).reshape(1, -1)
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("p must be a non-empty sequence of finite non-negative numbers")
    total = float(w.sum())
    if total <= 0 or (not normalize and abs(total - 1.0) > 1e-9):
        raise ValueError(f"p must sum to 1 (sums to {total!r}); pass normalize=True for weights")
    return float(_rows(w, r, t, log_base)[0])


def sharma_mittal_rows(
    weights: np.ndarray, r: float, t: float, log_base: float = math.e
) -> np.ndarray:
    """H_{r,t} of every row of a 2-D array of non-negative weights (each row normalised).

    A row of zeros has entropy 0.  Vectorised: use it in hot loops.
    """
    r, t, log_base = checked_point(r, t, log_base)
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError("weights must be a 2-D array, one distribution per row")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")
    return _rows(w, r, t, log_base)


def _rows(w: np.ndarray, r: float, t: float, log_base: float) -> np.ndarray:
    m, n = w.shape
    labels = np.broadcast_to(np.arange(m)[:, None], (m, n)).ravel()
    h, _ = _grouped(w.ravel(), labels, m, r, t, log_base)
    return h


def sharma_mittal_grouped(
    weights: np.ndarray,
    labels: np.ndarray,
    n_groups: int,
    r: float,
    t: float,
    log_base: float = math.e,
) -> tuple[np.ndarray, np.ndarray]:
    """(H, mass) per group: H_{r,t} of each group's normalised weights and its total weight.

    ``weights`` has shape (n,); ``labels`` (m, n) holds a group id in [0, n_groups) for each
    weight in each of m partitions.  Both results have shape (m, n_groups); empty groups get
    H = 0 and mass 0.  This is the hot path for scoring many partitions of one distribution.
    """
    r, t, log_base = checked_point(r, t, log_base)
    labels = np.asarray(labels, dtype=np.int64)
    m, n = labels.shape
    flat = (labels + n_groups * np.arange(m, dtype=np.int64)[:, None]).ravel()
    w = np.broadcast_to(np.asarray(weights, dtype=float), (m, n)).ravel()
    h, mass = _grouped(w, flat, m * n_groups, r, t, log_base)
    return h.reshape(m, n_groups), mass.reshape(m, n_groups)


def _grouped(
    w: np.ndarray, flat: np.ndarray, size: int, r: float, t: float, log_base: float
) -> tuple[np.ndarray, np.ndarray]:
    """(H, mass) for each of ``size`` groups given flat weights and their group ids."""
    mass = np.bincount(flat, weights=w, minlength=size)
    keep = w > 0
    w, flat = w[keep], flat[keep]
    logp = np.log(w) - np.log(mass[flat])  # finite even where w / mass underflows
    renyi = _renyi_grouped(logp, flat, size, r)
    return _from_renyi(renyi, t) / math.log(log_base), mass


def _renyi_grouped(logp: np.ndarray, flat: np.ndarray, size: int, r: float) -> np.ndarray:
    """Renyi entropy (nats) of order r of each group, from the logs of its probabilities."""
    p = np.exp(logp)
    if r == 0:
        count = np.bincount(flat, minlength=size)
        return np.log(np.maximum(count, 1))
    if r == 1:
        return np.bincount(flat, weights=-p * logp, minlength=size)
    if r == math.inf or r > 1 + _NEAR_ONE:
        top = np.full(size, -np.inf)
        np.maximum.at(top, flat, logp)
        top[np.isneginf(top)] = 0.0
        if r == math.inf:
            return -top
        with np.errstate(over="ignore"):  # r * (a log ratio <= 0) may reach -inf: exp is 0
            ratio = np.exp(r * (logp - top[flat]))
        scaled = np.bincount(flat, weights=ratio, minlength=size)
        scaled[scaled == 0] = 1.0
        # r * top / (1 - r) as top * (-1 / (1 - 1/r)): r * top overflows for r near 1e308
        return np.log(scaled) / (1 - r) - top / (1 - 1 / r)
    s = r - 1
    if abs(s) < _NEAR_ONE:
        x = np.bincount(flat, weights=p * np.expm1(s * logp), minlength=size)
        return np.log1p(x) / -s
    power = np.bincount(flat, weights=np.exp(r * logp), minlength=size)
    power[power == 0] = 1.0
    return np.log(power) / (1 - r)


def _from_renyi(renyi: np.ndarray, t: float) -> np.ndarray:
    """H_{r,t} (nats) from the Renyi entropy R_r: -expm1(-(t-1) R) / (t-1), R at t = 1."""
    if t == 1:
        return renyi
    u = t - 1
    return -np.expm1(-u * renyi) / u


def uniform_entropy(sizes: np.ndarray, t: float, log_base: float = math.e) -> np.ndarray:
    """H_{r,t} of the uniform distribution on each of ``sizes`` outcomes (any r; 0 for 0)."""
    _, t, log_base = checked_point(1.0, t, log_base)
    n = np.maximum(np.asarray(sizes, dtype=float), 1.0)
    return _from_renyi(np.log(n), t) / math.log(log_base)


def renyi(p: Sequence[float] | np.ndarray, r: float, log_base: float = math.e) -> float:
    """Renyi entropy of order r: H_{r,1}."""
    return sharma_mittal(p, r, 1.0, log_base)


def tsallis(p: Sequence[float] | np.ndarray, q: float, log_base: float = math.e) -> float:
    """Tsallis entropy of order q: H_{q,q}."""
    return sharma_mittal(p, q, q, log_base)


def shannon(p: Sequence[float] | np.ndarray, log_base: float = math.e) -> float:
    """Shannon entropy: H_{1,1}."""
    return sharma_mittal(p, 1.0, 1.0, log_base)
