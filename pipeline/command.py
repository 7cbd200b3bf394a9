"""The ``guesslab`` console command: :func:`pipeline.__main__.cli`, imported once Ctrl-C is
handled (:mod:`pipeline.ctrl_c`), so that Ctrl-C while its modules import is the one line."""

from __future__ import annotations

from pipeline.ctrl_c import starting


def cli() -> None:
    """The ``guesslab`` command."""
    starting()
    from pipeline.__main__ import cli as command

    command()
