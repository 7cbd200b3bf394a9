"""guesslab's Hydra configs, installed as the package ``pipeline.conf`` (pyproject maps this
folder there), so ``python -m pipeline`` finds them from any folder: config.yaml, study/,
cluster/, paths/."""
