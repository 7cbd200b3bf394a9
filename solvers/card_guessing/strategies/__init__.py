"""Strategies with a choice rule of their own: the entropy-weighted move and belief players."""
