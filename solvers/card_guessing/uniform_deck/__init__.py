"""Optimal, greedy-by-pairs and persistent play on a uniform deck (r types of m cards), in floats.

What it answers: the expected score, its variance and its distribution of those policies on
decks of any number of types (13 ranks of 4 included), each state found by its rank in its
layer (no keys, no hashing), and the optimal first moves.  A deck solves in memory, or out of
core with its layers on disk, each split over Dask workers; both give the same values.
"""
