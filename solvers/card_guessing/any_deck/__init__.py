"""Optimal and greedy play on any deck, in floats: decks too large for exact/, layer by layer.

What it answers: the expected score, its variance and its distribution, and the optimal first
moves, of optimal play or of greedy play with lowest or highest ties, on any deck whose states
fit one int64 key (state_codes.py: 4 suits of 13, up to 7 types of 4).  States are hashed
keys, one layer (the states after L cards) at a time; the values agree with exact/yes_no.py
to 1e-12 (tests).
"""
