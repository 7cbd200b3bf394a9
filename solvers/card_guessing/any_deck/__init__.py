"""Floating-point engines for large decks (NumPy and Numba), checked against exact/."""
