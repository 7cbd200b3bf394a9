"""Brute force: every deck order enumerated, for tiny decks.

The reference the tests check the exact solvers (exact/) and the float engines against; no
task runs it.  It stays beside the solvers it checks, under the same import rules as exact/.
"""
