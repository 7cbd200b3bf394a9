"""A stored study read back from its folder alone: described, recomputed and compared (its
doors: pipeline/describe.py and pipeline/reproduce.py)."""
