"""The command line's checks: the command line before Hydra, every job of a multirun, the run
folder, and the one line a command exits with."""
