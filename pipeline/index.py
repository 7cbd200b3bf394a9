"""``python -m pipeline.index OUTPUTS``: write ``<OUTPUTS>/index.html``, the index of the
studies in OUTPUTS (:mod:`pipeline.outputs.index`)."""

from pipeline.outputs.index import main

if __name__ == "__main__":
    raise SystemExit(main())
