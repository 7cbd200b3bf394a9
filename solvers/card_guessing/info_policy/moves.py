"""The ``info`` move in floats: each type's score from the entropies of its answers' posteriors,
and the set of types tied at the best.

``P(next is a) = sum_k' C[k', a] / sum C`` (posterior.py's next level); the entropies H_{r,t}
of the two posteriors are computed as solvers/entropy.py does (same limits and branches), in
one pass over the weights.

Decisions are *exactly* those of :func:`entropy_weighted.info_chooser`: that chooser ties every
score within ``entropy_weighted.TIE_TOLERANCE`` of the best and lets the tie-break pick.  The
float scores here and there differ by rounding only (bounded by :data:`ERR_H` per entropy and
:data:`ERR_P` per probability, see :func:`_scores`), so whenever a type's score lies within
that bound of the tie threshold the caller must take the decision from the exact Python path
(the kernels say "unsure").  Interchangeable types (same (c_i, p_i)) share one computation,
so their exact ties never depend on rounding.

Entropies and decisions are cached by the canonical state's cache key (state_codes.py: n and
the sorted codes), and a decision is stored as the set of (c, p) classes the chooser ties.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numba import types
from numba.typed import Dict

from solvers.card_guessing.exact import entropy_weighted, yes_no
from solvers.card_guessing.info_policy.posterior import float_posterior
from solvers.card_guessing.state_codes import (
    CACHE_KEY,
    Encoding,
    cache_encoding,
    canonical_cache_key,
    record_answer,
)
from solvers.kit.compile_once import njit

TIE_CODES = {"lowest": 0, "highest": 1, "uniform": 2}
ERR_H = 1e-10  # bound on |float H - exact-path H| / (1 + H) (the estimate is below 1e-12)
ERR_P = 1e-13  # bound on |float P(yes) - exact P(yes)|
UNSURE = -1
TOO_BIG = -2  # a game stop: the posterior outgrew the support limit


def encoding(deck: Sequence[int]) -> Encoding:
    """The state encoding of ``deck`` (cache keys); ValueError if a state or a composition box
    does not fit."""
    enc = cache_encoding(deck)
    if math.prod(c + 1 for c in enc.deck) >= 2**62:
        raise ValueError(f"deck {list(enc.deck)}: the compositions do not fit in int64 indices")
    return enc


def empty_entropy_cache() -> Dict:
    """A typed dict: canonical state key -> H of its composition posterior."""
    return Dict.empty(key_type=CACHE_KEY, value_type=types.float64)


def empty_decision_cache() -> Dict:
    """A typed dict: canonical state key -> bit mask of the tied canonical slots."""
    return Dict.empty(key_type=CACHE_KEY, value_type=types.int64)


# ------------------------------------------------------------------------------ entropy


@njit(cache=True)
def _entropy(w, m, r, t, inv_log_base):
    """H_{r,t} of the normalised positive weights w[:m], as entropy.sharma_mittal computes it."""
    mass = 0.0
    count = 0
    for j in range(m):
        if w[j] > 0:
            mass += w[j]
            count += 1
    if count == 0:
        return 0.0
    lm = math.log(mass)
    if r == 0:
        ren = math.log(count)
    elif r == 1:
        ren = 0.0
        for j in range(m):
            if w[j] > 0:
                lp = math.log(w[j]) - lm
                ren -= math.exp(lp) * lp
    elif r == math.inf or r > 1.5:
        top = -math.inf
        for j in range(m):
            if w[j] > 0:
                top = max(top, math.log(w[j]) - lm)
        if r == math.inf:
            ren = -top
        else:
            sc = 0.0
            for j in range(m):
                if w[j] > 0:
                    sc += math.exp(r * (math.log(w[j]) - lm - top))
            # r * top / (1 - r) written so that it cannot overflow for r near 1e308
            ren = math.log(sc) / (1 - r) - top / (1 - 1 / r)
    elif abs(r - 1) < 0.5:
        s = r - 1
        x = 0.0
        for j in range(m):
            if w[j] > 0:
                lp = math.log(w[j]) - lm
                x += math.exp(lp) * math.expm1(s * lp)
        ren = math.log1p(x) / -s
    else:
        pw = 0.0
        for j in range(m):
            if w[j] > 0:
                pw += math.exp(r * (math.log(w[j]) - lm))
        ren = math.log(pw) / (1 - r)
    if t != 1:
        u = t - 1
        ren = -math.expm1(-u * ren) / u
    return ren * inv_log_base


# ------------------------------------------------------------------------ the info move


@njit(cache=True)
def _child_entropy(C, mm, a, yes, key, cache, r_, t_, inv_lb, scratch):
    """H of the child's posterior (from the cache when this canonical state was seen)."""
    if key in cache:
        return cache[key]
    r = C.shape[1]
    for j in range(mm):
        if yes:
            scratch[j] = C[j, a]
        else:
            s = 0.0
            for b in range(r):
                if b != a:
                    s += C[j, b]
            scratch[j] = s
    h = _entropy(scratch, mm, r_, t_, inv_lb)
    cache[key] = h
    return h


@njit(cache=True)
def _child_key(cs, ps, n, a, yes, bits_p, width, per_word, tc, tp, codes):
    """The cache key of the state after naming ``a`` and hearing the answer."""
    for i in range(cs.size):
        tc[i] = cs[i]
        tp[i] = ps[i]
    record_answer(tc, tp, a, yes)
    return canonical_cache_key(n - 1, tc, tp, bits_p, width, per_word, codes)


@njit(cache=True)
def _scores(cs, ps, n, C, mm, gamma, r_, t_, inv_lb, bits_p, width, per_word, cache):
    """(score, error bound, P(yes), P(no)) per type; score -inf where ``a`` cannot be next."""
    r = cs.size
    score = np.full(r, -np.inf)
    err = np.zeros(r)
    pyes = np.zeros(r)
    pno = np.zeros(r)
    total = 0.0
    col = np.zeros(r)
    for j in range(mm):
        for b in range(r):
            col[b] += C[j, b]
            total += C[j, b]
    scratch = np.empty(mm)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    for a in range(r):
        if col[a] == 0:
            continue
        done = False
        for b in range(a):  # an interchangeable type was done: the very same numbers
            if cs[b] == cs[a] and ps[b] == ps[a]:
                score[a], err[a], pyes[a], pno[a] = score[b], err[b], pyes[b], pno[b]
                done = True
                break
        if done:
            continue
        py = col[a] / total
        pyes[a] = py
        ns = 0.0  # the no-child's mass, as a sum of non-negative terms (no subtraction)
        for b in range(r):
            if b != a:
                ns += col[b]
        pn = ns / total
        hmax = 0.0
        penalty = 0.0
        if gamma != 0:
            out = 0.0
            ky = _child_key(cs, ps, n, a, True, bits_p, width, per_word, tc, tp, codes)
            hy = _child_entropy(C, mm, a, True, ky, cache, r_, t_, inv_lb, scratch)
            out += py * hy
            hmax = hy
            if pn > 0:
                kn = _child_key(cs, ps, n, a, False, bits_p, width, per_word, tc, tp, codes)
                hn = _child_entropy(C, mm, a, False, kn, cache, r_, t_, inv_lb, scratch)
                out += pn * hn
                hmax = max(hmax, hn)
            penalty = gamma * out
        pno[a] = pn
        score[a] = py - penalty
        err[a] = ERR_P * (1 + gamma * (1 + hmax)) + gamma * 2 * ERR_H * (1 + hmax)
    return score, err, pyes, pno


@njit(cache=True)
def _tied_mask(score, err, tol):
    """Bit mask of the types tied at the best score (as entropy_weighted.tied_best), or UNSURE."""
    r = score.size
    best = -np.inf
    ebest = 0.0
    for a in range(r):
        if score[a] > best:
            best = score[a]
            ebest = err[a]
    thr = best - tol * max(1.0, abs(best))
    mask = np.int64(0)
    for a in range(r):
        if score[a] == -np.inf:
            continue
        if abs(score[a] - thr) <= err[a] + ebest:
            return np.int64(UNSURE)
        if score[a] >= thr:
            mask |= np.int64(1) << a
    return mask


@njit(cache=True)
def _pick(mask, tie_code):
    """The guess among the bits of ``mask``: lowest, highest or uniformly random."""
    bits = np.empty(64, np.int64)
    nb = 0
    for a in range(63):
        if (mask >> a) & 1:
            bits[nb] = a
            nb += 1
    if tie_code == 0 or nb == 1:
        return bits[0]
    if tie_code == 1:
        return bits[nb - 1]
    return bits[np.random.randint(nb)]  # noqa: NPY002 (Numba: legacy API only)


@njit(cache=True)
def _canonical_mask(cs, ps, bits_p, mask, sorted_codes):
    """The labelled tie mask as a mask over canonical (sorted-code) slots."""
    r = cs.size
    out = np.int64(0)
    for a in range(r):
        if (mask >> a) & 1:
            code = (cs[a] << bits_p) | ps[a]
            for j in range(r):
                if sorted_codes[j] == code:
                    out |= np.int64(1) << j
    return out


@njit(cache=True)
def _labelled_mask(cs, ps, bits_p, cmask, sorted_codes):
    """The canonical-slot mask back on the labelled types (every type of a tied class)."""
    r = cs.size
    out = np.int64(0)
    for a in range(r):
        if cs[a] == 0:
            continue
        code = (cs[a] << bits_p) | ps[a]
        for j in range(r):
            if (cmask >> j) & 1 and sorted_codes[j] == code:
                out |= np.int64(1) << a
                break
    return out


ExactMask = Callable[[yes_no.State], int]  # a labelled state -> mask of the tied types


def exact_tied_mask(gamma: float, r: float, t: float, log_base: float) -> ExactMask:
    """The exact path's tied set as a bit mask.

    That set is entropy_weighted.tied_best of entropy_weighted.info_scores.
    """
    h = entropy_weighted.posterior_entropy(r, t, log_base)

    def mask(state: yes_no.State) -> int:
        scores = entropy_weighted.info_scores(state, yes_no.yes_counts(state), gamma, h)
        return sum(1 << a for a in entropy_weighted.tied_best(scores))

    return mask


def float_posterior_entropy(state: yes_no.State, r: float, t: float, log_base: float) -> float:
    """H_{r,t} (units of ``log_base``) of the composition posterior of a state, in floats."""
    _, w = float_posterior(state)
    return float(_entropy(w, w.size, float(r), float(t), 1.0 / math.log(log_base)))
