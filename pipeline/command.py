"""The ``guesslab`` console command: :func:`pipeline.__main__.cli`, imported once Ctrl-C is
handled (:mod:`pipeline.ctrl_c`), so that Ctrl-C while its modules import is the one line;
``guesslab reproduce ...`` and ``guesslab describe ...`` are :mod:`pipeline.reproduce` and
:mod:`pipeline.describe`."""

from __future__ import annotations

import sys

from pipeline.ctrl_c import starting

SUBCOMMANDS = {"reproduce": "pipeline.reproduce", "describe": "pipeline.describe"}


def cli() -> None:
    """The ``guesslab`` command."""
    starting()
    if sys.argv[1:2] and sys.argv[1] in SUBCOMMANDS:
        sys.exit(subcommand(sys.argv[1], sys.argv[2:]))
    from pipeline.__main__ import cli as command

    command()


def subcommand(name: str, argv: list[str]) -> int:
    """The exit status of ``guesslab NAME ARGV``: the module's ``main(argv)``, run once it is
    imported with Python's own Ctrl-C (the module says in one line what a stop left)."""
    import importlib
    import signal

    from pipeline.ctrl_c import stopped_while_starting

    module = importlib.import_module(SUBCOMMANDS[name])
    if signal.getsignal(signal.SIGINT) is stopped_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return module.main(argv)
