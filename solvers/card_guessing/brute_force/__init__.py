"""Brute force: every deck order enumerated, the cross-check of the exact solvers."""
