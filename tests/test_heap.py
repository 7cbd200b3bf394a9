"""The cycle collector around the driver's start and exit (pipeline.heap)."""

from __future__ import annotations

import gc
import signal
import sys
from importlib import metadata

import pytest

from pipeline.__main__ import cli
from pipeline.heap import no_cyclic_gc


@pytest.mark.parametrize("enabled", [True, False])
def test_no_cyclic_gc_pauses_the_collector_and_leaves_it_as_it_was(enabled):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with no_cyclic_gc():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), no_cyclic_gc():  # restored after an error too
            raise RuntimeError("boom")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_the_command_freezes_the_heap_on_its_way_out_even_when_it_fails(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["guesslab", "study=no_such_study"])
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # the command sets its own
    monkeypatch.delenv("GUESSLAB_COMMAND", raising=False)  # and notes its command line
    before = gc.get_freeze_count()
    handlers = {stop: signal.getsignal(stop) for stop in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as exc:
            cli()
        assert exc.value.code == 2  # the usual refusal, before any work
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()  # this test process goes on
        for stop, handler in handlers.items():
            signal.signal(stop, handler)
    assert "study='no_such_study': unknown study" in capsys.readouterr().err


def test_main_itself_never_freezes_so_callers_in_a_process_that_goes_on_keep_their_heap(
    monkeypatch,
):
    from pipeline.__main__ import main

    monkeypatch.setattr(sys, "argv", ["guesslab", "study=no_such_study"])
    before = gc.get_freeze_count()
    with pytest.raises(SystemExit):
        main()
    assert gc.get_freeze_count() == before


def test_the_guesslab_command_is_the_freezing_entry_point(monkeypatch):
    (script,) = metadata.entry_points(group="console_scripts", name="guesslab")
    assert script.value == "pipeline.command:cli"  # Ctrl-C handled before the heavy imports
    ran = []
    monkeypatch.setattr("pipeline.__main__.cli", lambda: ran.append("cli"))
    previous = {stop: signal.getsignal(stop) for stop in (signal.SIGINT, signal.SIGTERM)}
    try:
        script.load()()
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)
    assert ran == ["cli"]  # then pipeline.__main__.cli, which freezes the heap on its way out
