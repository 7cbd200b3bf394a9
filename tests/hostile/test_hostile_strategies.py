"""A strategy of one's own is a guest (solvers/own_strategy.py, pipeline/running/worker.py):
whatever its code raises, ``SystemExit`` and a ``KeyboardInterrupt`` it raises itself included, is
that task's error row naming the strategy and the move, and the run goes on to its summary
(exit 1); a strategy whose answers are not a function of its belief, or whose belief's own
methods fail or change under the solver, is named so; the user's Ctrl-C still stops the
run; a run whose process the code ended leaves a claim the next run removes and names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline import ctrl_c
from pipeline.storage.store import load_results
from tests.helpers.commands import cli_run_in_process, own_study_command
from tests.helpers.own_strategy_source import SWITCH_AFTER_NO

GUESTS = '''
import os
import random
import signal
import sys

{SWITCH_AFTER_NO}

class MostLeft:
    """The type with the most cards not yet confirmed (ties to the lowest)."""

    def start(self, deck):
        return tuple(deck)

    def live(self, left):
        return [t for t in range(len(left)) if left[t]]

    def guess(self, left):
        return max(self.live(left), key=lambda t: (left[t], -t))

    def update(self, left, guess, yes):
        return left[:guess] + (left[guess] - 1,) + left[guess + 1 :] if yes else left


class ExitsInGuess(MostLeft):
    def guess(self, left):
        sys.exit()


class ExitsThreeInUpdate(MostLeft):
    def update(self, left, guess, yes):
        raise SystemExit(3)


class ExitsInConstructor(MostLeft):
    def __init__(self):
        sys.exit("no")


class InterruptsItself(MostLeft):
    def guess(self, left):
        raise KeyboardInterrupt


class Drawn(MostLeft):
    """Draws its guess among the types with cards left (a seeded generator of its own)."""

    def __init__(self):
        self.rng = random.Random(0)

    def guess(self, left):
        return self.rng.choice(self.live(left))


class CountsGuesses(MostLeft):
    def __init__(self):
        self.n = 0

    def guess(self, left):
        self.n += 1
        return self.live(left)[self.n % len(self.live(left))]


class CountsUpdates(MostLeft):
    """Its guess reads how many updates it was told: one belief gets other guesses later."""

    def __init__(self):
        self.told = 0

    def guess(self, left):
        return self.live(left)[self.told % len(self.live(left))]

    def update(self, left, guess, yes):
        self.told += 1
        return super().update(left, guess, yes)


class EqRaises:
    def __init__(self, left):
        self.left = left

    def __hash__(self):
        return hash(self.left)

    def __eq__(self, other):
        raise ValueError("eq boom")


class BeliefEqRaises(MostLeft):
    def start(self, deck):
        return EqRaises(tuple(deck))

    def guess(self, belief):
        return super().guess(belief.left)

    def update(self, belief, guess, yes):
        return EqRaises(super().update(belief.left, guess, yes))


class HashDrawn:
    rng = random.Random(0)

    def __init__(self, left):
        self.left = left

    def __hash__(self):
        return self.rng.getrandbits(60)

    def __eq__(self, other):
        return self.left == other.left


class BeliefHashDrawn(BeliefEqRaises):
    def start(self, deck):
        return HashDrawn(tuple(deck))

    def update(self, belief, guess, yes):
        return HashDrawn(MostLeft.update(self, belief.left, guess, yes))


class Counts:
    def __init__(self, left):
        self.left = list(left)

    def __hash__(self):
        return hash(tuple(self.left))

    def __eq__(self, other):
        return self.left == other.left


class ChangesItsBelief(MostLeft):
    def start(self, deck):
        return Counts(deck)

    def guess(self, belief):
        return super().guess(belief.left)

    def update(self, belief, guess, yes):
        belief.left[guess] -= yes
        return belief


class CtrlCOnThirdGuess(MostLeft):
    """The user's Ctrl-C arrives while the third guess is asked (a signal, not a raise)."""

    def __init__(self):
        self.n = 0

    def guess(self, left):
        self.n += 1
        if self.n == 3:
            signal.raise_signal(signal.SIGINT)
        return super().guess(left)


class CtrlCSwallowed(CtrlCOnThirdGuess):
    """Catches the user's Ctrl-C in its third guess, and goes on as if nothing came."""

    def guess(self, left):
        try:
            return super().guess(left)
        except KeyboardInterrupt:
            return MostLeft.guess(self, left)


class EndsItsProcess(MostLeft):
    def guess(self, left):
        os._exit(0)


class EditsItsFile(MostLeft):
    """Appends a line to its own module when built: the next task meets other code."""

    def __init__(self, n=0):
        with open(__file__, "a") as fh:
            fh.write("# edited while the run ran\\n")
'''.replace("{SWITCH_AFTER_NO}", SWITCH_AFTER_NO)


@pytest.fixture
def guests(tmp_path, monkeypatch):
    """A user's folder: a module of hostile strategies (a name of its own) on sys.path, and
    a studies folder; (folder, module)."""
    name = f"guests_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(GUESTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "studies" / "study").mkdir(parents=True)
    return tmp_path, name


def study_of(folder: Path, module: str, classes: list[str], args: str = "") -> None:
    """``<folder>/studies/study/lab.yaml``: the optimum beside each class on (2,2,1)."""
    named = "".join(f"  {c.lower()}:\n    _target_: {module}.{c}\n{args}" for c in classes)
    text = "name: lab\nfamily: card_guessing\ngrid:\n  deck: [[2, 2, 1]]\nstrategies:\n"
    (folder / "studies" / "study" / "lab.yaml").write_text(text + "  optimal: {}\n" + named)


def run_lab(monkeypatch, capsys, folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline --config-dir <folder>/studies study=lab`` on cluster=sync, here."""
    config = (
        "--config-dir",
        str(folder / "studies"),
        "study=lab",
        f"paths.outputs={folder / 'out'}",
    )
    return cli_run_in_process(
        monkeypatch, capsys, *config, "cluster=sync", "run.progress=false", *args
    )


def errors(folder: Path) -> dict[str, str]:
    """Each strategy's error in the stored rows ('' for an ok row)."""
    rows = load_results(folder / "out" / "lab" / "results")
    return {r.strategy: r.error if r.status == "error" else "" for r in rows.itertuples()}


RAISED = {
    "ExitsInGuess": "guess(belief=(2, 2, 1)) at card 1 of 5 raised SystemExit (sys.exit: a "
    "strategy's code cannot end the run)",
    "ExitsThreeInUpdate": "update(belief=(2, 2, 1), guess=0, answer=",
    "ExitsInConstructor": "the constructor raised SystemExit('no') (sys.exit",
    "InterruptsItself": "guess(belief=(2, 2, 1)) at card 1 of 5 raised KeyboardInterrupt, "
    "raised by the code itself (not a Ctrl-C)",
}


def test_sys_exit_and_a_keyboard_interrupt_raised_by_a_strategy_are_its_error_rows(
    guests, monkeypatch, capsys
):
    """``sys.exit()``, ``SystemExit(3)`` (in a move, in the constructor) and a
    ``KeyboardInterrupt`` the strategy raises itself: each its task's error row naming the
    strategy, the move and the line of the user's file; the optimum is stored, the summary
    written, exit 1, and so again on a rerun (never a silent exit, 3 or 130)."""
    folder, module = guests
    study_of(folder, module, list(RAISED))
    for _ in range(2):
        done = run_lab(monkeypatch, capsys, folder)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "4 failed" in done.stdout and "summary:" in done.stdout, done.stdout
        assert "stopped" not in done.stderr, done.stderr
        found = errors(folder)
        assert found["optimal"] == ""
        for cls, words in RAISED.items():
            assert f"strategy {cls.lower()!r} ({module}.{cls})" in found[cls.lower()], cls
            assert words in found[cls.lower()], (cls, found[cls.lower()])
            assert f"(at {module}.py:" in found[cls.lower()], found[cls.lower()]
    assert "raised SystemExit(3) (sys.exit" in found["exitsthreeinupdate"]


NOT_A_FUNCTION = {
    "Drawn": "when asked again: its answers must depend on the belief alone (not drawn at "
    "random, nor kept on self between calls), or the strategy has no exact value to store",
    "CountsGuesses": "guess(belief=(2, 2, 1)) at card 1 of 5 returned 1, then 2 when asked again",
    "CountsUpdates": "where this belief was met before: its answers must depend on the belief",
    "BeliefEqRaises": "the belief's == comparing",
    "BeliefHashDrawn": "start((2, 2, 1)) returned a belief whose hash is not the same twice",
    "ChangesItsBelief": "update(belief=<",
}


def test_a_strategy_that_is_no_function_of_its_belief_is_named_in_its_error_row(
    guests, monkeypatch, capsys
):
    """A guess drawn at random or read from a counter on ``self``, a belief met again that
    gets another guess, a belief whose ``__eq__`` raises or whose ``__hash__`` is random,
    an update that changes the belief it was given: no exact value is stored, each task's
    row is an error naming the strategy and the fault; the optimum's row is stored."""
    folder, module = guests
    study_of(folder, module, list(NOT_A_FUNCTION))
    done = run_lab(monkeypatch, capsys, folder)
    assert done.returncode == 1, done.stdout + done.stderr
    found = errors(folder)
    assert found["optimal"] == ""
    for cls, words in NOT_A_FUNCTION.items():
        assert f"strategy {cls.lower()!r} ({module}.{cls})" in found[cls.lower()], cls
        assert words in found[cls.lower()], (cls, found[cls.lower()])
    assert "raised ValueError: eq boom" in found["beliefeqraises"]
    assert "changed the belief it was given, in place" in found["changesitsbelief"]


@pytest.mark.parametrize(
    ("handler", "cls"),
    [
        ("the command's", "CtrlCOnThirdGuess"),
        ("Python's", "CtrlCOnThirdGuess"),
        ("the command's", "CtrlCSwallowed"),
    ],
)
def test_the_user_s_ctrl_c_while_a_strategy_moves_still_stops_the_run(
    guests, monkeypatch, capsys, handler, cls
):
    """A Ctrl-C (SIGINT) that arrives while the strategy's code runs is the user's: the run
    stops with the one line and exit 130, and no error row is stored for the strategy, under
    the command's handler and under Python's own; so too under the command's when the
    strategy catches it and goes on (the command ignores every later Ctrl-C)."""
    folder, module = guests
    study_of(folder, module, [cls])
    hook = sys.unraisablehook
    try:
        if handler == "the command's":
            monkeypatch.setattr("pipeline.ctrl_c._stopped_by", None)
            ctrl_c.stop_on_first_ctrl_c()
        done = run_lab(monkeypatch, capsys, folder, "run.batch_size=1")
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.unraisablehook = hook
    assert done.returncode == 130, done.stdout + done.stderr
    assert done.stderr.strip().startswith("stopped (Ctrl-C)"), done.stderr
    results = folder / "out" / "lab" / "results"
    assert not results.exists() or cls.lower() not in set(errors(folder))


def test_a_file_edited_during_a_sync_run_is_named_as_edited(guests, monkeypatch, capsys):
    """A strategy's module edited while a ``cluster=sync`` run computes: the next task of it
    is an error row saying the code was edited after the run checked it (not a word of
    workers, which a sync run has none of); the task computed before is stored."""
    folder, module = guests
    study_of(folder, module, ["EditsItsFile"], args="    n: [1, 2]\n")
    done = run_lab(monkeypatch, capsys, folder, "run.batch_size=1")
    assert done.returncode == 1, done.stdout + done.stderr
    rows = load_results(folder / "out" / "lab" / "results")
    mine = rows[rows["strategy"] == "editsitsfile"]
    assert sorted(mine["status"]) == ["error", "ok"]
    (error,) = mine.loc[mine["status"] == "error", "error"]
    assert "its code was edited after this run checked it" in error, error
    assert "worker" not in error, error


def test_a_built_in_function_as_target_is_refused_as_no_strategy_class(guests, monkeypatch, capsys):
    """``_target_: builtins.print``: exit 2 before any work, one line saying it is a built-in
    function, not a strategy class (not that 'builtins' cannot be imported)."""
    folder, _ = guests
    (folder / "studies" / "study" / "lab.yaml").write_text(
        "name: lab\nfamily: card_guessing\ngrid:\n  deck: [[2, 2, 1]]\n"
        "strategies:\n  mine:\n    _target_: builtins.print\n"
    )
    done = run_lab(monkeypatch, capsys, folder)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        "error: study.strategies.mine._target_='builtins.print': builtins.print is a built-in "
        "function of Python's built-in module 'builtins', not a strategy class"
    ), line
    assert "cannot be imported" not in line and not (folder / "out").exists()


def test_a_module_that_exits_when_imported_is_refused_at_the_door(guests, monkeypatch, capsys):
    """A strategy's module that calls ``sys.exit(4)`` as it is imported: exit 2 before any
    work, one line naming the study key and the SystemExit (never a silent exit 4)."""
    folder, module = guests
    (folder / f"{module}_exits.py").write_text("import sys\n\nsys.exit(4)\n")
    (folder / "studies" / "study" / "lab.yaml").write_text(
        "name: lab\nfamily: card_guessing\ngrid:\n  deck: [[2, 2, 1]]\n"
        f"strategies:\n  mine:\n    _target_: {module}_exits.Mine\n"
    )
    done = run_lab(monkeypatch, capsys, folder)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: study.strategies.mine._target_='{module}_exits.Mine': "), line
    assert f"module '{module}_exits' cannot be imported (SystemExit(4) (sys.exit" in line, line
    assert not (folder / "out").exists()


def test_a_nan_argument_is_refused_naming_its_own_override(guests, monkeypatch, capsys):
    """An argument ``nan`` given on the command line: exit 2, the line names that argument
    and the override that set it, not the override of ``_target_``."""
    folder, module = guests
    (folder / "studies" / "study" / "lab.yaml").write_text(
        "name: lab\nfamily: card_guessing\ngrid:\n  deck: [[2, 2, 1]]\nstrategies:\n  optimal: {}\n"
    )
    target = f"+study.strategies.mine._target_={module}.SwitchAfterNo"
    done = run_lab(monkeypatch, capsys, folder, target, "+study.strategies.mine.patience=[nan]")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: study.strategies.mine.patience=nan: "), line
    assert line.endswith("(from the command line override +study.strategies.mine.patience=[nan])")


def command(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline`` on the study ``lab`` of ``folder``, a process of its own with
    the user's folder on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(Path.cwd())])}
    line = own_study_command(
        folder, "lab", f"paths.outputs={folder / 'out'}", "run.progress=false", *args
    )
    return subprocess.run(line, capture_output=True, text=True, env=env, cwd=folder, timeout=300)


def test_a_strategy_that_ends_its_sync_process_leaves_a_claim_the_next_run_names(guests):
    """``os._exit`` in a strategy's code on ``cluster=sync`` ends the only process (nothing
    can answer for it there); the next run removes the claim it left, saying so in one line
    naming that run's process, and computes what it left undone."""
    folder, module = guests
    study_of(folder, module, ["EndsItsProcess"])
    first = command(folder, "cluster=sync")
    claims = list((folder / "out" / "lab" / ".claims").iterdir())
    assert len(claims) == 1, (first.stdout, first.stderr)
    study_of(folder, module, ["MostLeft"])
    second = command(folder, "cluster=sync")
    assert second.returncode == 0, second.stderr
    pid = claims[0].name.split("-")[-2]
    (note,) = [line for line in second.stdout.splitlines() if line.startswith("note: the claim")]
    assert f"{claims[0]} of process {pid} on host " in note, note
    assert "is held by no process: that run ended without finishing" in note, note
    assert not claims[0].exists()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["the driver's first batches", "workers"])
def test_a_strategy_s_exit_and_interrupt_are_error_rows_on_a_local_cluster(guests, where):
    """On ``cluster=local`` (the default), in the driver's first batches and on the
    workers: ``sys.exit`` and a KeyboardInterrupt the strategy raises are its tasks' error
    rows, exit 1, the summary written, and no traceback of Dask's or the worker's."""
    folder, module = guests
    study_of(folder, module, ["ExitsThreeInUpdate", "InterruptsItself"])
    more = ["cluster.start_after_s=0", "cluster.n_workers=1"] if where == "workers" else []
    done = command(folder, "cluster=local", *more)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "summary:" in done.stdout and "Traceback" not in done.stderr, done.stderr
    found = errors(folder)
    assert "raised SystemExit(3)" in found["exitsthreeinupdate"]
    assert "raised KeyboardInterrupt, raised by the code itself" in found["interruptsitself"]
    assert found["optimal"] == ""


OTHER_GAMES = '''
import itertools
import random
import sys


class DrawnCall:
    """Higher or lower: a call drawn at random (a seeded generator of its own)."""

    def __init__(self):
        self.rng = random.Random(0)

    def start(self, ranks, suits):
        return (suits,) * ranks

    def update(self, left, card):
        return left[: card - 1] + (left[card - 1] - 1,) + left[card:]

    def call(self, left, card):
        return self.rng.choice(["higher", "lower"])


class ExitingCall(DrawnCall):
    def call(self, left, card):
        sys.exit(2)


def answer(guess, secret):
    black = sum(g == s for g, s in zip(guess, secret))
    return black, sum(min(guess.count(c), secret.count(c)) for c in set(guess)) - black


class DrawnCode:
    """Mastermind: a code still possible, drawn at random."""

    def __init__(self):
        self.rng = random.Random(0)

    def start(self, pegs, colours):
        return tuple(itertools.product(range(colours), repeat=pegs))

    def guess(self, possible):
        return self.rng.choice(possible)

    def update(self, possible, guess, feedback):
        return tuple(code for code in possible if answer(guess, code) == feedback)


class InterruptingCode(DrawnCode):
    def guess(self, possible):
        raise KeyboardInterrupt
'''

GAMES = {
    "DrawnCall": ({"family": "high_low", "n": 4}, "when asked again: its answers must depend"),
    "ExitingCall": ({"family": "high_low", "n": 4}, "raised SystemExit(2) (sys.exit"),
    "DrawnCode": ({"family": "mastermind", "pegs": 2, "colours": 3}, "when asked again"),
    "InterruptingCode": (
        {"family": "mastermind", "pegs": 2, "colours": 3},
        "raised KeyboardInterrupt, raised by the code itself",
    ),
}


@pytest.mark.parametrize("cls", list(GAMES))
def test_the_other_games_name_a_strategy_s_exit_interrupt_and_chance(tmp_path, monkeypatch, cls):
    """Higher or lower and Mastermind (the query games' shared checks): a strategy's
    ``sys.exit``, its own KeyboardInterrupt and answers drawn at random are a StrategyError
    naming it and the move, never an exit, a stop or a stored value."""
    from solvers import solve
    from solvers.own_strategy import StrategyError

    module = f"games_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{module}.py").write_text(OTHER_GAMES)
    monkeypatch.syspath_prepend(str(tmp_path))
    game, words = GAMES[cls]
    task = {**game, "strategy": "mine", "strategy_target": f"{module}.{cls}"}
    with pytest.raises(StrategyError) as raised:
        solve(task)
    assert f"strategy 'mine' ({module}.{cls})" in str(raised.value) and words in str(raised.value)
