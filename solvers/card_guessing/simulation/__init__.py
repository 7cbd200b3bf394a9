"""Monte Carlo play on real shuffled decks (seeded, with standard errors)."""
