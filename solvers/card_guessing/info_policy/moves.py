"""The ``info`` move in floating point (Numba): Monte Carlo on 52-card decks and ``method: float``.

The exact ``info`` move (strategies/entropy_weighted.py) needs the composition posterior of the
n cards still to come in a state (c, p).  Here it is computed as a *filter*: given the
posterior P over the composition k of the cards to come, the next card is a type ``b`` with
probability k_b / n (the cards to come are in uniform random order given k, no answer constrains
them), so

    the weight of k' = k - e_b among the cards after the next one is  P(k) * k_b.

Call C[k', b] that weight.  After naming ``a`` and hearing "yes" the posterior is C[., a];
after "no" it is sum over b != a of C[., b]; with no answer at all (a "no" to an exhausted
type), the sum over every b.  Only products and sums of non-negative numbers appear, so
every weight carries a relative rounding error of a few ulps per card, exact zeros stay
exact (the support is exact) and nothing cancels.  The posterior of any state (c, p) comes
from its own short history: start from the point mass at k = c with every unconfirmed card
to come, then p_i "no" answers to each type i and F free slots (the "no" slots of types that
are exhausted now).  Any history reaching a state gives the same posterior (the (c, p)
statistic is sufficient), and every prefix of a consistent history is consistent.

``P(next is a) = sum_k' C[k', a] / sum C``; the entropies H_{r,t} of the two posteriors are
computed as solvers/entropy.py does (same limits and branches), in one pass over the weights.

Decisions are *exactly* those of :func:`entropy_weighted.info_chooser`: that chooser ties every
score within ``entropy_weighted.TIE_TOLERANCE`` of the best and lets the tie-break pick.  The
float scores here and there differ by rounding only (bounded by :data:`ERR_H` per entropy, see
:func:`_score_errors`), so whenever a type's score lies within that bound of the tie
threshold the caller must take the decision from the exact Python path (the kernels say
"unsure").  Interchangeable types (same (c_i, p_i)) share one computation, so their exact
ties never depend on rounding.

States are packed into 4 int64 words (``n`` and one ``c << bits_p | p`` code per type,
:class:`Packing`); canonical keys sort the codes (types are interchangeable for the scores,
and a decision is stored as the set of (c, p) classes the chooser ties).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit, types
from numba.typed import Dict

from solvers import entropy
from solvers.card_guessing.exact import yes_no
from solvers.card_guessing.strategies import entropy_weighted

Codes = np.ndarray  # int64 per type: c << bits_p | p (0 for an exhausted type)
TIE_CODES = {"lowest": 0, "highest": 1, "uniform": 2}
ERR_H = 1e-10  # bound on |float H - exact-path H| / (1 + H) (the estimate is below 1e-12)
ERR_P = 1e-13  # bound on |float P(yes) - exact P(yes)|
UNSURE = -1
TOO_BIG = -2  # a game stop: the posterior outgrew the support limit
KEY_WORDS = 4
KEY_TYPE = types.UniTuple(types.int64, KEY_WORDS)


# ----------------------------------------------------------------------------- packing


@dataclass(frozen=True)
class Packing:
    """How a deck's states (n, (c_i, p_i)) are packed into :data:`KEY_WORDS` int64 words."""

    deck: tuple[int, ...]
    r: int
    bits_p: int
    code_bits: int
    per_word: int

    @property
    def n_cards(self) -> int:
        return sum(self.deck)


def packing(deck: Sequence[int]) -> Packing:
    """The packing of ``deck``; ValueError if a state or a composition box does not fit."""
    deck = tuple(int(c) for c in deck)
    bits_p = max(1, sum(deck).bit_length())
    code_bits = max(deck).bit_length() + bits_p
    per_word = 63 // code_bits
    if len(deck) + 1 > KEY_WORDS * per_word:
        raise ValueError(f"deck {list(deck)}: too many types for the float info kernels")
    if math.prod(c + 1 for c in deck) >= 2**62:
        raise ValueError(f"deck {list(deck)}: the compositions do not fit in int64 indices")
    return Packing(deck, len(deck), bits_p, code_bits, per_word)


def empty_entropy_cache() -> Dict:
    """A typed dict: canonical state key -> H of its composition posterior."""
    return Dict.empty(key_type=KEY_TYPE, value_type=types.float64)


def empty_decision_cache() -> Dict:
    """A typed dict: canonical state key -> bit mask of the tied canonical slots."""
    return Dict.empty(key_type=KEY_TYPE, value_type=types.int64)


@njit(cache=True)
def _codes(cs, ps, bits_p, out):
    for i in range(cs.size):
        out[i] = (cs[i] << bits_p) | ps[i] if cs[i] > 0 else 0


@njit(cache=True)
def _sort_desc(codes):
    for k in range(1, codes.size):
        v = codes[k]
        j = k - 1
        while j >= 0 and codes[j] < v:
            codes[j + 1] = codes[j]
            j -= 1
        codes[j + 1] = v


@njit(cache=True)
def _key(n, codes, code_bits, per_word):
    """The 4-word key of (n, codes): slot 0 holds n, slot i + 1 the code of type i."""
    w = np.zeros(KEY_WORDS, np.int64)
    w[0] = n
    for i in range(codes.size):
        s = i + 1
        w[s // per_word] |= codes[i] << (code_bits * (s % per_word))
    return (w[0], w[1], w[2], w[3])


# ----------------------------------------------------------------- the posterior filter


@njit(cache=True)
def _strides(caps):
    out = np.empty(caps.size, np.int64)
    s = np.int64(1)
    for i in range(caps.size):
        out[i] = s
        s *= caps[i] + 1
    return out


DENSE_BOX = 1 << 22  # composition boxes up to this size index a dense position table


@njit(cache=True)
def _workspace(strides, caps, rows):
    """Buffers for the filter: posterior (ks, idx, w), next level (kids, kidx, C), positions."""
    r = strides.size
    box = strides[r - 1] * (caps[r - 1] + 1)
    dense = box <= DENSE_BOX
    size = box if dense else _pow2(2 * rows)
    return (
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty(rows),
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty((rows, r)),
        np.full(size, -1, np.int64),
        np.empty(rows, np.int64),
        dense,
    )


@njit(cache=True)
def _pow2(x):
    cap = 16
    while cap < x:
        cap <<= 1
    return cap


@njit(cache=True)
def _grown(ws, m, need):
    """The workspace with room for ``need`` rows (the posterior's first m rows kept)."""
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    rows = ks.shape[0]
    if need <= rows:
        return ws
    while rows < need:
        rows *= 2
    r = ks.shape[1]
    nks = np.empty((rows, r), np.int64)
    nidx = np.empty(rows, np.int64)
    nw = np.empty(rows)
    nks[:m] = ks[:m]
    nidx[:m] = idx[:m]
    nw[:m] = w[:m]
    npos = pos if dense else np.full(_pow2(2 * rows), -1, np.int64)
    return (
        nks,
        nidx,
        nw,
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty((rows, r)),
        npos,
        np.empty(rows, np.int64),
        dense,
    )


@njit(cache=True, inline="always")
def record_answer(c, p, a, yes):
    """Update the statistic (c, p) in place after naming type ``a``; 1 for a yes, else 0.

    A yes confirms one card of ``a`` (its "no" slots open to every type once none is left);
    a no counts one more refused slot for ``a``, unless ``a`` is exhausted already.
    """
    if yes:
        c[a] -= 1
        if c[a] == 0:
            p[a] = 0
        return 1
    if c[a] > 0:
        p[a] += 1
    return 0


@njit(cache=True, inline="always")
def _child_row(ws, i, b, ci, mm):
    """The next level's row of composition index ``ci`` = row i minus one card of type b.

    A new composition gets row ``mm`` (the caller then counts it and clears its weights):
    its position is recorded (dense table, or open addressing on a hash of ci), its counts
    copied from row i with one fewer b.
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    if dense:
        h = ci
    else:
        mask = pos.size - 1
        h = np.int64((np.uint64(ci) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
        while pos[h] != -1 and kidx[pos[h]] != ci:
            h = (h + 1) & mask
    j = pos[h]
    if j != -1:
        return j
    pos[h] = mm
    slots[mm] = h
    kidx[mm] = ci
    for t in range(ks.shape[1]):
        kids[mm, t] = ks[i, t]
    kids[mm, b] -= 1
    return mm


@njit(cache=True)
def _next_level(ws, m, strides):
    """Fill the next level: its compositions k' = k - e_b and C[k', b] = P(k) k_b; its size.

    The workspace must hold m * r rows (see :func:`_grown`).
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    r = strides.size
    mm = 0
    for i in range(m):
        for b in range(r):
            kb = ks[i, b]
            if kb == 0:
                continue
            j = _child_row(ws, i, b, idx[i] - strides[b], mm)
            if j == mm:
                for t in range(r):
                    C[j, t] = 0.0
                mm += 1
            C[j, b] += w[i] * kb
    for j in range(mm):
        pos[slots[j]] = -1
    return mm


@njit(cache=True)
def _advance(ws, m, strides, a, yes):
    """Make the posterior after naming ``a`` (-1: free) and the answer, without C; its size.

    "yes": k -> k - e_a with weight P(k) k_a, one to one (in place).  "no": the weights of
    k' = k - e_b summed over b != a in one column (the workspace must hold m * r rows).
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    r = strides.size
    total = 0.0
    if yes:
        m2 = 0
        for i in range(m):
            ka = ks[i, a]
            if ka == 0:
                continue
            for t in range(r):
                ks[m2, t] = ks[i, t]
            ks[m2, a] -= 1
            idx[m2] = idx[i] - strides[a]
            w[m2] = w[i] * ka
            total += w[m2]
            m2 += 1
        for j in range(m2):
            w[j] /= total
        return m2
    acc = C[:, 0]
    mm = 0
    for i in range(m):
        for b in range(r):
            kb = ks[i, b]
            if kb == 0 or b == a:
                continue
            j = _child_row(ws, i, b, idx[i] - strides[b], mm)
            if j == mm:
                acc[j] = 0.0
                mm += 1
            acc[j] += w[i] * kb
    for j in range(mm):
        pos[slots[j]] = -1
        total += acc[j]
    for j in range(mm):
        for t in range(r):
            ks[j, t] = kids[j, t]
        idx[j] = kidx[j]
        w[j] = acc[j] / total
    return mm


@njit(cache=True)
def _start(ws, cs, strides):
    """The point mass at k = c (every unconfirmed card still to come); its size (1)."""
    ks, idx, w = ws[0], ws[1], ws[2]
    idx[0] = 0
    for i in range(cs.size):
        ks[0, i] = cs[i]
        idx[0] += cs[i] * strides[i]
    w[0] = 1.0
    return 1


@njit(cache=True)
def _step(ws, m, strides, a, yes):
    """(workspace, size) after one card named ``a`` (-1: free) with the given answer."""
    ws = _grown(ws, m, m * strides.size)
    return ws, _advance(ws, m, strides, a, yes)


@njit(cache=True)
def _posterior(ws, cs, ps, n, strides):
    """(workspace, size): the composition posterior of the cards to come in state (c, p)."""
    m = _start(ws, cs, strides)
    unconfirmed = 0
    refused = 0
    for i in range(cs.size):
        unconfirmed += cs[i]
        if cs[i] > 0:
            refused += ps[i]
    for i in range(cs.size):
        if cs[i] == 0:
            continue
        for _ in range(ps[i]):
            ws, m = _step(ws, m, strides, i, False)
    for _ in range(unconfirmed - n - refused):
        ws, m = _step(ws, m, strides, -1, False)
    return ws, m


# --------------------------------------------------------------------------- entropy


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


# ----------------------------------------------------------------------- the info move


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
def _child_key(cs, ps, n, a, yes, bits_p, code_bits, per_word, tc, tp, codes):
    for i in range(cs.size):
        tc[i] = cs[i]
        tp[i] = ps[i]
    if yes:
        tc[a] -= 1
        if tc[a] == 0:
            tp[a] = 0
    else:
        tp[a] += 1
    _codes(tc, tp, bits_p, codes)
    _sort_desc(codes)
    return _key(n - 1, codes, code_bits, per_word)


@njit(cache=True)
def _scores(cs, ps, n, C, mm, gamma, r_, t_, inv_lb, bits_p, code_bits, per_word, cache):
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
            ky = _child_key(cs, ps, n, a, True, bits_p, code_bits, per_word, tc, tp, codes)
            hy = _child_entropy(C, mm, a, True, ky, cache, r_, t_, inv_lb, scratch)
            out += py * hy
            hmax = hy
            if pn > 0:
                kn = _child_key(cs, ps, n, a, False, bits_p, code_bits, per_word, tc, tp, codes)
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


# ---------------------------------------------------------------------- Monte Carlo


@njit(cache=True)
def _play_games(
    orders,
    deck,
    seeds,
    gamma,
    r_,
    t_,
    inv_lb,
    tol,
    tie,
    bits_p,
    code_bits,
    per_word,
    hcache,
    dcache,
    max_support,
    err_scale,
):
    """(scores, stop, c, p, largest support): play info on each order; stop >= 0 = unsure there.

    A posterior with more than ``max_support`` compositions stops everything (stop TOO_BIG).

    A stopped game's c, p hold the state where the exact decision is needed; once it is in
    ``dcache`` the game is replayed from the start (same seed, so the same random ties).
    """
    n_games, n_cards = orders.shape
    r = deck.size
    scores = np.zeros(n_games, np.int64)
    stops = np.full(n_games, -1, np.int64)
    cs_out = np.zeros((n_games, r), np.int64)
    ps_out = np.zeros((n_games, r), np.int64)
    strides = _strides(deck)
    codes = np.empty(r, np.int64)
    largest = 1
    ws = _workspace(strides, deck, 64)
    for g in range(n_games):
        np.random.seed(seeds[g])  # noqa: NPY002 (per game: replays draw the same ties)
        cs = deck.copy()
        ps = np.zeros(r, np.int64)
        m = _start(ws, cs, strides)
        score = 0
        for pos in range(n_cards):
            n = n_cards - pos
            if m > max_support:
                stops[g] = TOO_BIG
                return scores, stops, cs_out, ps_out, m
            ws = _grown(ws, m, m * r)
            largest = max(largest, m)
            _codes(cs, ps, bits_p, codes)
            _sort_desc(codes)
            key = _key(n, codes, code_bits, per_word)
            if key in dcache:
                cmask = dcache[key]
            else:
                mm = _next_level(ws, m, strides)
                sc, er, _, _ = _scores(
                    cs, ps, n, ws[5], mm, gamma, r_, t_, inv_lb, bits_p, code_bits, per_word, hcache
                )
                mask = _tied_mask(sc, er * err_scale, tol)
                if mask == UNSURE:
                    stops[g] = pos
                    cs_out[g] = cs
                    ps_out[g] = ps
                    break
                cmask = _canonical_mask(cs, ps, bits_p, mask, codes)
                dcache[key] = cmask
            a = _pick(_labelled_mask(cs, ps, bits_p, cmask, codes), tie)
            yes = orders[g, pos] == a
            m = _advance(ws, m, strides, a, yes)
            score += record_answer(cs, ps, a, yes)
        scores[g] = score
    return scores, stops, cs_out, ps_out, largest


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


@dataclass
class InfoPlay:
    """Monte Carlo play of ``info``: the kernels' caches, kept across the chunks of a task."""

    deck: Sequence[int]
    gamma: float
    r: float = 1.0
    t: float = 1.0
    log_base: float = 2.0
    tie_break: str = "lowest"
    max_support: int = entropy_weighted.MAX_POSTERIOR
    err_scale: float = 1.0  # widen the rounding bounds (tests: force exact decisions)

    def __post_init__(self) -> None:
        self.pack = packing(self.deck)
        self.r, self.t, self.log_base = entropy.checked_point(self.r, self.t, self.log_base)
        self.hcache = empty_entropy_cache()
        self.dcache = empty_decision_cache()
        self.exact = exact_tied_mask(self.gamma, self.r, self.t, self.log_base)
        self.exact_calls = 0
        self.largest_support = 1

    def scores(self, orders: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Scores of info on ``orders`` (one seed per game for its random ties)."""
        deck = np.asarray(self.pack.deck, np.int64)
        todo = np.arange(len(orders))
        out = np.zeros(len(orders), np.int64)
        while todo.size:
            scores, stops, cs, ps, largest = _play_games(
                np.ascontiguousarray(orders[todo]),
                deck,
                np.asarray(seeds, np.int64)[todo],
                self.gamma,
                self.r,
                self.t,
                1.0 / math.log(self.log_base),
                entropy_weighted.TIE_TOLERANCE,
                TIE_CODES[self.tie_break],
                self.pack.bits_p,
                self.pack.code_bits,
                self.pack.per_word,
                self.hcache,
                self.dcache,
                self.max_support,
                self.err_scale,
            )
            self.largest_support = max(self.largest_support, int(largest))
            if np.any(stops == TOO_BIG):
                raise ValueError(
                    f"deck {list(self.pack.deck)}: a composition posterior of {largest:,} "
                    f"compositions exceeds max_support={self.max_support:,}"
                )
            out[todo] = scores
            stopped = np.flatnonzero(stops >= 0)
            for g in stopped:
                self._decide_exactly(self.pack.n_cards - int(stops[g]), cs[g], ps[g])
            todo = todo[stopped]
        return out

    def _decide_exactly(self, n: int, cs: np.ndarray, ps: np.ndarray) -> None:
        """Store the exact path's decision for the state (n, c, p) in the decision cache."""
        state = (n, tuple(zip(cs.tolist(), ps.tolist(), strict=True)))
        mask = self.exact(state)
        self.exact_calls += 1
        codes = np.empty(self.pack.r, np.int64)
        _codes(cs, ps, self.pack.bits_p, codes)
        _sort_desc(codes)
        key = _key(n, codes, self.pack.code_bits, self.pack.per_word)
        self.dcache[key] = _canonical_mask(cs, ps, self.pack.bits_p, np.int64(mask), codes)


# ------------------------------------------------------------------ Python entry points


def float_posterior(state: yes_no.State) -> tuple[np.ndarray, np.ndarray]:
    """(compositions, probabilities) of the cards still to come in a labelled state."""
    n, pairs = state
    cs = np.array([c for c, _ in pairs], np.int64)
    ps = np.array([p if c else 0 for c, p in pairs], np.int64)
    strides = _strides(cs)
    ws, m = _posterior(_workspace(strides, cs, 64), cs, ps, n, strides)
    w = ws[2][:m]
    return ws[0][:m].copy(), w / w.sum()


def float_posterior_entropy(state: yes_no.State, r: float, t: float, log_base: float) -> float:
    """H_{r,t} (units of ``log_base``) of the composition posterior of a state, in floats."""
    _, w = float_posterior(state)
    return float(_entropy(w, w.size, float(r), float(t), 1.0 / math.log(log_base)))


# ------------------------------------------------- method float: the policy's exact tree


@njit(cache=True)
def _decode_codes(codes, bits_p, cs, ps):
    pmask = (np.int64(1) << bits_p) - 1
    for i in range(codes.size):
        cs[i] = codes[i] >> bits_p
        ps[i] = codes[i] & pmask


@njit(cache=True)
def _layer_decisions(
    ucodes, n, top, gamma, r_, t_, inv_lb, tol, bits_p, code_bits, per_word, hcache, max_support
):
    """Per canonical state (rows of codes, n cards to come): tie mask over its slots (or
    UNSURE), P(yes) and P(no) per slot, and the largest posterior met.  ``top``: the
    largest count of the deck."""
    u, r = ucodes.shape
    masks = np.empty(u, np.int64)
    pyes = np.zeros((u, r))
    pno = np.zeros((u, r))
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    largest = 1
    caps = np.full(r, top, np.int64)  # a canonical slot may hold any type: one box for all
    strides = _strides(caps)
    ws = _workspace(strides, caps, 64)
    for s in range(u):
        _decode_codes(ucodes[s], bits_p, cs, ps)
        ws, m = _posterior(ws, cs, ps, n, strides)
        largest = max(largest, m)
        if m > max_support:
            masks[:] = TOO_BIG
            return masks, pyes, pno, largest
        ws = _grown(ws, m, m * r)
        mm = _next_level(ws, m, strides)
        sc, er, py, pn = _scores(
            cs, ps, n, ws[5], mm, gamma, r_, t_, inv_lb, bits_p, code_bits, per_word, hcache
        )
        masks[s] = _tied_mask(sc, er, tol)
        pyes[s] = py
        pno[s] = pn
    return masks, pyes, pno, largest


@dataclass
class InfoValue:
    """The float evaluation of an info policy: score distribution and what it took."""

    pmf: np.ndarray  # P(score = k), k = 0..N
    n_states: int  # labelled states reached under the policy (every layer)
    n_canonical: int  # canonical states whose move was computed
    exact_calls: int  # moves the floats could not decide safely (taken exactly)
    largest_support: int  # the largest composition posterior met
    layer_sizes: list[int]

    @property
    def expected_score(self) -> float:
        return float(np.arange(self.pmf.size) @ self.pmf)

    @property
    def score_variance(self) -> float:
        k = np.arange(self.pmf.size)
        return float((k * k) @ self.pmf) - self.expected_score**2


Progress = Callable[[str], None]


def evaluate(
    deck: Sequence[int],
    gamma: float,
    r: float = 1.0,
    t: float = 1.0,
    log_base: float = 2.0,
    tie_break: str = "lowest",
    max_support: int = entropy_weighted.MAX_POSTERIOR,
    progress: Progress | None = None,
) -> InfoValue:
    """The info policy's score distribution on a shuffled ``deck``, in floats.

    Forward over the labelled states the policy reaches, layer by layer (a layer = cards
    passed), with each state's probability; a move is computed once per canonical state
    (the tied (c, p) classes), then the tie-break picks the lowest or highest labelled type.
    The score so far is N - sum(c), so the last layer's probabilities are the distribution.
    """
    if tie_break not in ("lowest", "highest"):
        raise ValueError(f"tie_break={tie_break!r}: method=float does lowest or highest")
    pack = packing(deck)
    r, t, log_base = entropy.checked_point(r, t, log_base)
    exact = exact_tied_mask(gamma, r, t, log_base)
    n_cards, bits_p = pack.n_cards, pack.bits_p
    cs = np.array([pack.deck], np.int64)
    ps = np.zeros_like(cs)
    prob = np.ones(1)
    sizes, n_canonical, exact_calls, largest = [], 0, 0, 1
    for depth in range(n_cards):
        sizes.append(len(prob))
        n = n_cards - depth
        codes = np.where(cs > 0, (cs << bits_p) | ps, 0)
        ucodes, inv = _unique_rows(-np.sort(-codes, axis=1), pack.code_bits)
        masks, pyes, pno, big = _layer_decisions(
            np.ascontiguousarray(ucodes),
            n,
            max(pack.deck),
            gamma,
            r,
            t,
            1.0 / math.log(log_base),
            entropy_weighted.TIE_TOLERANCE,
            bits_p,
            pack.code_bits,
            pack.per_word,
            empty_entropy_cache(),
            max_support,
        )
        largest = max(largest, int(big))
        if np.any(masks == TOO_BIG):
            raise ValueError(
                f"deck {list(pack.deck)}: a composition posterior of {big:,} compositions "
                f"exceeds max_support={max_support:,}"
            )
        n_canonical += len(ucodes)
        for u in np.flatnonzero(masks == UNSURE):
            pairs = tuple((int(c) >> bits_p, int(c) & ((1 << bits_p) - 1)) for c in ucodes[u])
            masks[u] = exact((n, pairs))
            exact_calls += 1
        a, py, pn = _labelled_moves(codes, ucodes, inv, masks, pyes, pno, tie_break)
        cs, ps, prob = _children(cs, ps, prob, a, py, pn, bits_p, pack.code_bits)
        if progress:
            progress(f"layer {depth + 1}: {len(prob):,} states, {len(ucodes):,} canonical")
    sizes.append(len(prob))
    pmf = np.bincount(n_cards - cs.sum(axis=1), weights=prob, minlength=n_cards + 1)
    return InfoValue(pmf, sum(sizes), n_canonical, exact_calls, largest, sizes)


def _labelled_moves(codes, ucodes, inv, masks, pyes, pno, tie_break):
    """(guess, P(yes), P(no)) per labelled state from its canonical state's decision."""
    slot_tied = (masks[:, None] >> np.arange(ucodes.shape[1])) & 1 == 1  # (U, r)
    tied_codes = np.where(slot_tied, ucodes, -1)[inv]  # (S, r): codes of the tied classes
    tied = (codes[:, :, None] == tied_codes[:, None, :]).any(axis=2) & (codes > 0)
    r = codes.shape[1]
    a = tied.argmax(axis=1) if tie_break == "lowest" else r - 1 - tied[:, ::-1].argmax(axis=1)
    chosen = codes[np.arange(len(a)), a]
    slot = (ucodes[inv] == chosen[:, None]).argmax(axis=1)
    return a, pyes[inv, slot], pno[inv, slot]


def _children(cs, ps, prob, a, py, pn, bits_p, code_bits):
    """The next layer (distinct labelled states) and the probability of reaching each."""
    rows = np.arange(len(a))
    yc, yp = cs.copy(), ps.copy()
    yc[rows, a] -= 1
    yp[rows, a] = np.where(yc[rows, a] == 0, 0, yp[rows, a])
    np_ = ps.copy()
    np_[rows, a] += 1
    codes = np.concatenate([(yc << bits_p) | yp, (cs << bits_p) | np_])
    weight = np.concatenate([prob * py, prob * pn])
    keep = weight > 0
    states, inv = _unique_rows(codes[keep], code_bits)
    out = np.bincount(inv, weights=weight[keep], minlength=len(states))
    return states >> bits_p, states & ((1 << bits_p) - 1), out


def _unique_rows(rows: np.ndarray, code_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows, index of each row's distinct row): rows packed in one int64 if they fit."""
    r = rows.shape[1]
    if r * code_bits > 63:
        out, inv = np.unique(rows, axis=0, return_inverse=True)
        return out, inv.reshape(-1)
    shifts = np.arange(r, dtype=np.int64) * code_bits
    keys, inv = np.unique((rows << shifts).sum(axis=1), return_inverse=True)
    mask = (1 << code_bits) - 1
    return (keys[:, None] >> shifts) & mask, inv.reshape(-1)


# ------------------------------------------------------------ the family's float rows


def check_float_task(task: dict) -> None:
    """Refuse, before any work, a ``method: float`` info task these kernels cannot do."""
    from solvers.registry import TaskError

    if task["feedback"] != "partial":
        raise TaskError("method", "float", "the float solver is for feedback=partial")
    if task["tie_break"] not in ("lowest", "highest"):
        raise TaskError("tie_break", task["tie_break"], "method=float does lowest or highest")
    if (task.get("workers") or 1) > 1:
        raise TaskError("workers", task["workers"], "the distributed mode solves optimal only")
    try:
        packing(task["deck"])
    except ValueError as exc:
        raise TaskError("deck", task["deck"], str(exc)) from None


def float_rows(task: dict) -> list[dict]:
    """One row: the info policy's expected score, variance and score distribution (floats)."""
    value = evaluate(
        task["deck"],
        task["gamma"],
        task["entropy_r"],
        task["entropy_t"],
        task["log_base"],
        task["tie_break"],
    )
    return [
        {
            "expected_score": value.expected_score,
            "expected_score_exact": None,
            "score_variance": value.score_variance,
            "score_variance_exact": None,
            "score_pmf": value.pmf.tolist(),
            "n_states": value.n_states,
        }
    ]
