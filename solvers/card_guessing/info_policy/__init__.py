"""The entropy-weighted ``info`` policy in floats: Monte Carlo on 52-card decks and its exact tree.

What it answers: which type ``info`` names in a state (its decisions are exactly those of
exact/entropy_weighted.py: a float decision too close to a tie is taken on the exact
path), its scores on shuffled decks, and its score distribution over every state it reaches
(``method: float``).  The composition posterior of the cards to come is carried as a float
filter.
"""
