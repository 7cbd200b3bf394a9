"""Exact solvers of card guessing: rational values for small decks."""
