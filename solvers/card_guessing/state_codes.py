"""The (c, p) statistic of yes/no card guessing as int64 codes and keys: the one state encoding
of the compiled engines (any_deck/, info_policy/) and of compiled play (simulation/).

A state is exact/yes_no.py's statistic: n cards to come and, per type, c = cards not yet
confirmed by a yes and p = "no" answers to it.  A type's pair is a *code* ``c << bits_p | p``
of ``width`` bits (0 for an exhausted type: its "no"s no longer constrain anything), so codes
order pairs by (c, p).  A *canonical* state sorts its codes, largest first: types are
interchangeable, and exhausted types come last.  Keys pack codes into int64 words,
:attr:`Encoding.per_word` codes to a word:

- a **layer key** (any_deck/) is one word, slot k holding code k; n is left out, since a
  layer's states share it.  It needs r codes in 63 bits (:func:`layer_encoding`).
- a **cache key** (info_policy/) is :data:`KEY_WORDS` words, slot 0 holding n and slot i + 1
  the code of type i, so that one cache serves every layer (:func:`cache_encoding`).

Both engines order, sort and pack the same codes with the same kernels, so a state has one
code sequence however it is looked up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import types

from solvers.kit.compile_once import njit

kernel = njit(cache=True, nogil=True)  # nogil: a Dask worker keeps serving its data meanwhile
# the few lines an engine runs for every state it visits: inlined where they are called
step = njit(cache=True, nogil=True, inline="always")
KEY_WORDS = 4  # int64 words of a cache key
CACHE_KEY = types.UniTuple(types.int64, KEY_WORDS)  # a cache key's Numba type
Pairs = Sequence[tuple[int, int]]  # (c, p) per type


@dataclass(frozen=True)
class Encoding:
    """How a deck's states are written as codes: the bits of a "no" count and of a code."""

    deck: tuple[int, ...]
    r: int  # types (codes per state)
    bits_p: int  # bits of a "no" count: enough for N
    width: int  # bits of a code: bits of c plus bits_p

    @property
    def n_cards(self) -> int:
        return sum(self.deck)

    @property
    def per_word(self) -> int:
        """Codes one int64 word holds (63 bits: the sign bit stays clear)."""
        return 63 // self.width


def encoding(deck: Sequence[int]) -> Encoding:
    """The codes of ``deck``'s states (no key size checked: see the two below)."""
    deck = tuple(int(c) for c in deck)
    bits_p = max(1, sum(deck).bit_length())
    return Encoding(deck, len(deck), bits_p, max(deck).bit_length() + bits_p)


def layer_encoding(deck: Sequence[int]) -> Encoding:
    """The encoding of ``deck`` for layer keys; ValueError if a state does not fit in 63 bits."""
    enc = encoding(deck)
    if enc.width * enc.r > 63:
        raise ValueError(
            f"a state of deck {list(enc.deck)} needs {enc.width * enc.r} bits; the float solver "
            "packs states into 63 (fewer types or smaller counts)"
        )
    return enc


def cache_encoding(deck: Sequence[int]) -> Encoding:
    """The encoding of ``deck`` for cache keys; ValueError if n and r codes do not fit."""
    enc = encoding(deck)
    if enc.r + 1 > KEY_WORDS * enc.per_word:
        raise ValueError(f"deck {list(enc.deck)}: too many types for the float info kernels")
    return enc


# ------------------------------------------------------------------------------ kernels


@step
def codes_of(cs, ps, bits_p, codes):
    """Fill ``codes`` with the code of each type's (c, p) (0 for an exhausted type)."""
    for i in range(cs.size):
        codes[i] = (cs[i] << bits_p) | ps[i] if cs[i] > 0 else 0


@step
def sort_desc(codes):
    """Sort ``codes`` in place, largest first (insertion sort: a few types)."""
    for k in range(1, codes.size):
        v = codes[k]
        j = k - 1
        while j >= 0 and codes[j] < v:
            codes[j + 1] = codes[j]
            j -= 1
        codes[j + 1] = v


@step
def split_codes(codes, bits_p, cs, ps):
    """Fill ``cs``, ``ps`` with the (c, p) of each code."""
    pmask = (np.int64(1) << bits_p) - 1
    for i in range(codes.size):
        cs[i] = codes[i] >> bits_p
        ps[i] = codes[i] & pmask


@step
def layer_key(codes, width):
    """The one-word key of ``codes``: code k in slot k."""
    key = np.int64(0)
    for k in range(codes.size):
        key |= codes[k] << (width * k)
    return key


@kernel
def unpack_layer_key(key, r, width, bits_p, cs, ps):
    """Fill ``cs``, ``ps`` with the (c, p) in each of the ``r`` slots of a one-word key."""
    mask = (np.int64(1) << width) - 1
    pmask = (np.int64(1) << bits_p) - 1
    for k in range(r):
        code = (key >> (width * k)) & mask
        cs[k] = code >> bits_p
        ps[k] = code & pmask


@kernel
def cache_key(n, codes, width, per_word):
    """The :data:`KEY_WORDS`-word key of (n, codes): slot 0 holds n, slot i + 1 code i."""
    w = np.zeros(KEY_WORDS, np.int64)
    w[0] = n
    for i in range(codes.size):
        s = i + 1
        w[s // per_word] |= codes[i] << (width * (s % per_word))
    return (w[0], w[1], w[2], w[3])


@kernel
def canonical_cache_key(n, cs, ps, bits_p, width, per_word, codes):
    """The cache key of the canonical state (n, c, p); ``codes`` is left holding its codes."""
    codes_of(cs, ps, bits_p, codes)
    sort_desc(codes)
    return cache_key(n, codes, width, per_word)


@step
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


# ------------------------------------------------------------------ Python and NumPy side


def codes_array(cs: np.ndarray, ps: np.ndarray, bits_p: int) -> np.ndarray:
    """:func:`codes_of` over rows of states: (S, r) arrays of c and p -> (S, r) codes."""
    return np.where(cs > 0, (cs << bits_p) | ps, 0)


def layer_keys(rows: np.ndarray, width: int) -> np.ndarray:
    """:func:`layer_key` of each row of codes (r codes that fit one word)."""
    return (rows << (np.arange(rows.shape[1], dtype=np.int64) * width)).sum(axis=1)


def layer_key_codes(keys: np.ndarray, r: int, width: int) -> np.ndarray:
    """The (S, r) codes of one-word keys (the inverse of :func:`layer_keys`)."""
    shifts = np.arange(r, dtype=np.int64) * width
    return (keys[:, None] >> shifts) & ((1 << width) - 1)


def encode(pairs: Pairs, enc: Encoding, canonical: bool = True) -> int:
    """The layer key of a state given its (c, p) per type (exhausted types: c = 0)."""
    cs = np.array([c for c, _ in pairs] + [0] * (enc.r - len(pairs)), np.int64)
    ps = np.array([p if c else 0 for c, p in pairs] + [0] * (enc.r - len(pairs)), np.int64)
    codes = np.empty(enc.r, np.int64)
    codes_of(cs, ps, enc.bits_p, codes)
    if canonical:
        sort_desc(codes)
    return int(layer_key(codes, enc.width))


def decode(key: int, enc: Encoding) -> tuple[tuple[int, int], ...]:
    """The (c, p) per slot of a layer key (canonical keys: largest pair first, then empties)."""
    cs = np.empty(enc.r, np.int64)
    ps = np.empty(enc.r, np.int64)
    unpack_layer_key(np.int64(key), enc.r, enc.width, enc.bits_p, cs, ps)
    return tuple((int(c), int(p)) for c, p in zip(cs, ps, strict=True))


def pairs_of(codes: Sequence[int], bits_p: int) -> tuple[tuple[int, int], ...]:
    """The (c, p) of each code."""
    pmask = (1 << bits_p) - 1
    return tuple((int(code) >> bits_p, int(code) & pmask) for code in codes)


def start_key(enc: Encoding, canonical: bool = True) -> int:
    """The layer key of the state before the first card."""
    return encode([(c, 0) for c in enc.deck], enc, canonical)
