"""``python -m pipeline [study=NAME] [cluster=local|sync|address] [key=value ...]``.

A thin Hydra entry point around :func:`pipeline.run.run_study`.  Exit status: 0 when every
task succeeded, 1 when some task failed (their rows say why), 2 for a bad config (nothing
is written) or a store that cannot be written (finished files stay complete), 130 when
stopped by Ctrl-C and 143 by SIGTERM (one line says what is stored).

In a multirun (``-m``) a job that fails raises :class:`pipeline.launchers.JobFailed`
instead of exiting, because a job may run in another process (joblib), on a Dask worker or
on a Slurm node: every Hydra launcher hands the exception back, the driver runs every job
of the sweep and then exits with the status of the first failed job.
"""

from __future__ import annotations

if __name__ == "__main__":  # python pipeline/__main__.py: Ctrl-C is one line while modules import
    from pipeline.ctrl_c import starting

    starting()

import errno
import os
import re
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import hydra
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pipeline.config import StudyError, conf_dir, short_repr
from pipeline.ctrl_c import exit_status, nothing_written, stop_name, stopped_while_starting
from pipeline.heap import frozen_for_exit
from pipeline.launchers import JobFailed, check_launcher, is_multirun, remember_command
from pipeline.run import run_study
from pipeline.store_newest import stored_ids
from pipeline.store_writes import StoreError
from pipeline.sweep_check import SweepRefused, sweep_stopped_message
from pipeline.task_context import CHECKPOINTS

CHOICE_GROUPS = ("study", "cluster", "paths")
_failed_tasks: list[int] = []
_ctrl_c_pressed: list[int] = []  # the signal (SIGINT, SIGTERM) that stopped the command


def search_dirs(argv: list[str]) -> list[Path]:
    """The config folders Hydra searches for this command line: ``--config-dir``/``-cd``,
    ``hydra.searchpath=[...]`` (file:// or pkg:// entries) and guesslab's own conf/."""
    dirs: list[Path] = []
    for i, arg in enumerate(argv):
        for flag in ("--config-dir", "-cd"):
            if arg == flag and i + 1 < len(argv):
                dirs.append(Path(argv[i + 1]).expanduser())
            elif arg.startswith(flag + "="):
                dirs.append(Path(arg.split("=", 1)[1]).expanduser())
        key, sep, value = arg.lstrip("+").partition("=")
        if sep and key == "hydra.searchpath":
            dirs += [p for entry in _list_values(value) if (p := _search_entry(entry))]
    return [*dirs, conf_dir()]


def _list_values(value: str) -> list[str]:
    return [v.strip().strip("'\"") for v in value.strip().strip("[]").split(",") if v.strip()]


def _search_entry(entry: str) -> Path | None:
    """The folder of one hydra.searchpath entry (file://DIR or pkg://module)."""
    scheme, sep, rest = entry.partition("://")
    if not sep:
        return Path(entry).expanduser()
    if scheme == "file":
        return Path(rest).expanduser()
    if scheme == "pkg":
        import importlib.resources

        try:
            return Path(str(importlib.resources.files(rest.replace("/", "."))))
        except (ImportError, TypeError):
            return None
    return None


def group_options(group: str, dirs: list[Path] | None = None) -> list[str]:
    """Config names available in a group, over the folders Hydra searches."""
    dirs = dirs if dirs is not None else [conf_dir()]
    return sorted({p.stem for d in dirs for p in (d / group).glob("*.yaml")})


def check_config_dirs(argv: list[str]) -> None:
    """Refuse a ``--config-dir`` (``-cd``) that is not a folder, before Hydra searches it."""
    for i, arg in enumerate(argv):
        for flag in ("--config-dir", "-cd"):
            if arg == flag and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(flag + "="):
                value = arg.split("=", 1)[1]
            else:
                continue
            folder = Path(value).expanduser()
            if not folder.is_dir():
                what = "not a folder" if folder.exists() else "no such folder"
                where = "" if str(folder.resolve()) == value else f" ({folder.resolve()})"
                raise StudyError(f"{flag}={value!r}: {what}{where}")


def check_choices(argv: list[str]) -> None:
    """Refuse an unknown study/cluster/paths name on the command line, listing valid ones,
    and any config file Hydra will read that it cannot read safely (:func:`check_yaml`): the
    primary config, the files chosen on the command line and, for a group not chosen there,
    the primary config's default."""
    check_config_dirs(argv)
    check_override_numbers(argv)
    check_override_keys(argv)
    check_override_lists(argv)
    check_deletions(argv)
    dirs = search_dirs(argv)
    primary = config_file("", _config_name(argv), dirs)
    defaults = _defaults(check_yaml(primary))
    chosen = set()
    for arg in argv:
        key, sep, value = arg.lstrip("+~").partition("=")
        if not sep or key not in CHOICE_GROUPS:
            continue
        chosen.add(key)
        valid = group_options(key, dirs)
        if value.lstrip().startswith(("{", "[")):  # a mapping or a list, not a name
            raise StudyError(
                f"{key}={value!r}: a {key} is chosen by name, {key}=NAME ({', '.join(valid)}); "
                f"to change one of its keys: {key}.KEY=VALUE"
            )
        for choice in _sweep_values(value):
            if choice not in valid:
                shown = short_repr(choice)
                raise StudyError(f"{key}={shown}: unknown {key}; valid: {', '.join(valid)}")
            check_yaml(config_file(key, choice, dirs))
    for group, choice in defaults.items():
        if group in CHOICE_GROUPS and group not in chosen and isinstance(choice, str):
            check_yaml(config_file(group, choice, dirs))


def check_deletions(argv: list[str]) -> None:
    """Refuse ``~KEY`` for what every run needs (a config group, a section, a required key:
    ``~paths``, ``~stage``, ``~run.max_batch``, ``~study.name``), saying it cannot be
    deleted and what to give instead, before Hydra reads the override."""
    for arg in argv:
        if not arg.startswith("~"):
            continue
        key = arg[1:].partition("=")[0]
        if not _required(key.split(".")):
            continue
        if key in CHOICE_GROUPS:
            valid = ", ".join(group_options(key, search_dirs(argv)))
            instead = f"choose one instead: {key}=NAME ({valid})"
        elif "." not in key and key != "stage":
            instead = f"set its keys instead: {key}.KEY=VALUE"
        else:
            instead = f"set it instead: {key}=VALUE"
        raise StudyError(f"{arg}: {key} cannot be deleted, every run needs it; {instead}")


def _required(parts: list[str]) -> bool:
    """Whether the config key of ``parts`` is one every run needs: a field without default
    of :class:`pipeline.config.Config` and its sections (in every cluster kind that has
    it); an item of a list (``study.grids.0``) is of the list's section."""
    from pipeline.config import Config, section_models

    models: list[Any] = [Config]
    for i, part in enumerate(parts):
        if part.isdigit():
            continue
        found = [m.model_fields[part] for m in models if part in m.model_fields]
        if len(found) < len(models) or not found:
            return False
        if i == len(parts) - 1:
            return all(f.is_required() for f in found)
        models = [m for f in found for m in section_models(f.annotation)]
    return False


def _config_name(argv: list[str]) -> str:
    """The primary config's name (``--config-name``/``-cn``, else guesslab's ``config``)."""
    name = "config"
    for i, arg in enumerate(argv):
        for flag in ("--config-name", "-cn"):
            if arg == flag and i + 1 < len(argv):
                name = argv[i + 1]
            elif arg.startswith(flag + "="):
                name = arg.split("=", 1)[1]
    return name


def _defaults(config: Any) -> dict[str, Any]:
    """The group choices of a primary config's defaults list (``- study: paper``)."""
    entries = config.get("defaults") if isinstance(config, dict) else None
    found: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            found.update(entry)
    return found


MAX_DIGITS = 4300  # Python reads no longer integer (sys.get_int_max_str_digits())
MAX_NODES = 1_000_000  # values in a config file once its aliases are expanded


def check_override_numbers(argv: list[str]) -> None:
    """Refuse an override holding a number too long to read (Hydra's parser raised
    ValueError), before Hydra parses it."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep:
            continue
        longest = max((len(run) for run in re.findall(r"\d+", value)), default=0)
        if longest > MAX_DIGITS:
            raise StudyError(
                f"{key.lstrip('+~')}={value}: a number of {longest} digits; "
                f"numbers have at most {MAX_DIGITS} digits"
            )


MAX_KEY = 200  # characters of an override's key (Hydra looks it up as a file name)
# values in the lists of one override: Hydra's parser takes time that grows faster than the
# square of their number (0.5 s for 2,000, 19 s for 10,000, most of an hour for 50,000)
MAX_LIST_ITEMS = 2000


def check_override_lists(argv: list[str]) -> None:
    """Refuse an override whose lists hold more than MAX_LIST_ITEMS values, before Hydra
    parses it (in bounded time; a study file holds any number, read in linear time)."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or "[" not in value:
            continue
        depth, quote, items = 0, "", 0
        for c in value:
            if quote:
                quote = "" if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            elif c == "," and depth > 0:
                items += 1
        if items >= MAX_LIST_ITEMS:
            raise StudyError(
                f"{key.lstrip('+~')}: a list of more than {MAX_LIST_ITEMS:,} values on the "
                f"command line ({items + 1:,}), more than Hydra reads in reasonable time; "
                "give it in a study file of your own (--config-dir)"
            )


def check_override_keys(argv: list[str]) -> None:
    """Refuse an override whose key is longer than any config key can be, before Hydra
    looks it up as a config group's file (an OSError: File name too long)."""
    for arg in argv:
        if arg.startswith("-"):
            continue
        key = arg.partition("=")[0].lstrip("+~")
        if len(key) > MAX_KEY:
            raise StudyError(
                f"{key}: a key of {len(key):,} characters, longer than any config key "
                f"({MAX_KEY} at most): unknown key"
            )


def config_file(group: str, name: str, dirs: list[Path]) -> Path | None:
    """The file Hydra takes for ``group=name``: the first search folder that has it."""
    return next((f for d in dirs if (f := d / group / f"{name}.yaml").is_file()), None)


def check_yaml(path: Path | None) -> Any:
    """A config file's content, read safely; StudyError naming the file (and the line, or
    the key) for one Hydra could not read in one line and in bounded time: not UTF-8, not
    YAML, an alias inside itself, aliases expanding to more than MAX_NODES values, an
    integer of more than MAX_DIGITS digits."""
    if path is None:
        return None
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise StudyError(
            f"{path}: line {line}: not UTF-8 text (byte {exc.object[exc.start]:#04x}); "
            "save the file as UTF-8"
        ) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None:
            _check_node(node, path)
        return yaml.safe_load(text)
    except RecursionError:
        raise StudyError(f"{path}: nested too deeply to read") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or exc
        raise StudyError(f"{path}:{where}: not valid YAML ({problem})") from None


def _check_node(root: yaml.Node, path: Path) -> None:
    """Refuse a self-containing alias, an alias bomb and overlong integers, walking each
    distinct node once (its expanded size memoised), so the check is linear in the file."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def where(keys: list[str]) -> str:
        return f"{path}: {''.join(k if k[0] == '[' else '.' + k for k in keys)[1:] or 'top'}"

    def size(node: yaml.Node, keys: list[str]) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_nodes:
            raise StudyError(f"{where(keys)}: an alias inside the value it names (a loop)")
        total = 1
        if isinstance(node, yaml.ScalarNode):
            if node.tag.endswith(":int") and len(node.value) > MAX_DIGITS:
                raise StudyError(
                    f"{where(keys)}={node.value}: a number of {len(node.value)} digits; "
                    f"numbers have at most {MAX_DIGITS} digits"
                )
        else:
            open_nodes.add(id(node))
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                    total += size(key, keys) + size(value, [*keys, name])
                    if total > MAX_NODES:
                        break
            else:
                for i, item in enumerate(node.value):
                    total += size(item, [*keys, f"[{i}]"])
                    if total > MAX_NODES:
                        break
            open_nodes.discard(id(node))
        if total > MAX_NODES:
            raise StudyError(
                f"{where(keys)}: more than {MAX_NODES:,} values once its aliases are expanded"
            )
        sizes[id(node)] = total
        return total

    size(root, [])


def _with_study_file(message: str) -> str:
    """A study.* error message with where its value came from: the command line override
    that set it, or else the study file, when there is one."""
    if not message.startswith("study."):
        return message
    override = command_line_override(message, list(HydraConfig.get().overrides.task))
    if override is not None:
        if len(override) > 120:  # the value is in the message already, shortened
            override = f"{override[:60]}... ({len(override):,} characters)"
        return f"{message} (from the command line override {override})"
    choice = HydraConfig.get().runtime.choices.get("study")
    path = config_file("study", str(choice), search_dirs(sys.argv[1:])) if choice else None
    return f"{message} (in {path})" if path else message


def command_line_override(message: str, overrides: list[str]) -> str | None:
    """The override of ``overrides`` that set the key a ``study.*`` message names (that key,
    a section holding it, or a key inside it), or None when the study file set it."""
    named = re.match(r"study(?:\.[^.=:\[\s]+|\[\d+\])*", message)
    if named is None:
        return None
    key = named.group(0)
    for override in overrides:
        given = override.lstrip("+~").partition("=")[0]
        given = re.sub(r"\.(\d+)(?=\.|\[|$)", r"[\1]", given)  # study.grids.0: study.grids[0]
        if given == "study" or not given.startswith("study."):
            continue  # the choice of study file, or another section
        if key == given or key.startswith((given + ".", given + "[")):
            return override
        if given.startswith((key + ".", key + "[")):
            return override
    return None


def _sweep_values(value: str) -> list[str]:
    if value.startswith(("choice(", "range(", "glob(")):
        return []  # Hydra's sweep functions: let Hydra resolve them
    return [v.strip() for v in value.split(",") if v.strip()]


@hydra.main(config_path="pkg://pipeline.conf", config_name="config", version_base="1.3")
def hydra_main(cfg: DictConfig) -> None:
    """Run one study (one job of a multirun) from the composed config."""
    multirun = HydraConfig.get().mode == RunMode.MULTIRUN
    try:
        report = run_study_or_stop(cfg)
    except KeyboardInterrupt as exc:
        stopped = getattr(exc, "report", None)
        rerun = summary_command() if getattr(stopped, "stage", None) == "summary" else ""
        raise Stopped(stopped_message(stopped, rerun)) from None
    except (StudyError, StoreError, OmegaConfBaseException, OSError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            if exc.errno not in NO_ROOM:
                raise
            text = no_room_line(cfg, exc)
        elif isinstance(exc, OmegaConfBaseException):
            text = one_line(exc)
        else:
            text = str(exc)
        message = f"error: {abbreviated(_with_study_file(text))}"
        print(message, file=sys.stderr)
        if multirun:
            raise JobFailed(2, message) from None
        sys.exit(2)
    if report.errors:
        message = (
            f"{report.errors} task(s) failed: see the rows with status 'error' "
            f"in {report.study_dir / 'results'}"
        )
        print(message, file=sys.stderr)
        if multirun:
            raise JobFailed(1, message)
        _failed_tasks.append(report.errors)


def run_study_or_stop(cfg: DictConfig) -> Any:
    """:func:`run_study`, where an error raised after Ctrl-C is the Ctrl-C it stands for: a
    library may turn the KeyboardInterrupt into an error of its own (DuckDB's
    "RuntimeError: Query interrupted" in the summary's counts, "ImportError:
    initialization failed" from an extension module whose import it interrupted)."""
    try:
        return run_study(cfg)
    except Exception as exc:
        if not _ctrl_c_pressed:
            raise
        stop = KeyboardInterrupt()
        stop.report = getattr(exc, "report", None)  # type: ignore[attr-defined]
        raise stop from None


NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)  # the disk refused a write


def no_room_line(cfg: Any, exc: OSError) -> str:
    """The one line for a write the disk refused (full, over quota, read-only) outside the
    store's own writes (which raise StoreError): the summary's files, runs/*.yaml."""
    where = exc.filename or Path(str(cfg.paths.outputs)) / str(cfg.study.name)
    return (
        f"paths.outputs={str(cfg.paths.outputs)!r}: cannot write {where} "
        f"({os.strerror(exc.errno)}); no partial file was left, the stored results are intact"
    )


class Stopped(KeyboardInterrupt):
    """Ctrl-C during a run: what is stored and how to resume, said in one line."""


def stop_on_first_ctrl_c() -> None:
    """The command's Ctrl-C: the first raises KeyboardInterrupt (the run closes its cluster
    and says in one line what is stored); every later one is ignored, so a second Ctrl-C
    while the cluster closes neither interrupts the closing with tracebacks (273 lines) nor
    kills the process at exit.  The workers of a LocalCluster ignore Ctrl-C themselves
    (pipeline.backends.worker_setup).  Left alone where Ctrl-C is not Python's default (a
    background job ignores it).  SIGTERM (a scheduler's kill, ``timeout``) is handled the
    same way, where it is the default (the line then names SIGTERM, exit status 143).

    A Ctrl-C whose KeyboardInterrupt is raised inside a finalizer (a weakref callback or a
    ``__del__`` the collector runs; the summary stage makes many) cannot stop the code the
    finalizer interrupted: Python would print "Exception ignored in ..." and its traceback,
    and the run would go on to exit 0 with every later Ctrl-C ignored.  Such a
    KeyboardInterrupt is not printed; the Ctrl-C is delivered again 5 ms later
    (``sys.unraisablehook``)."""
    handled = False
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, stopped_while_starting):
        signal.signal(signal.SIGTERM, _first_stop)  # a scheduler's kill, timeout: as Ctrl-C
        handled = True
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, stopped_while_starting):
        signal.signal(signal.SIGINT, _first_stop)
        handled = True
    if not handled:
        return
    others = sys.unraisablehook

    def raised_again(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            others(unraisable)
            return
        stop = _stop_signal() or signal.SIGINT
        signal.signal(stop, _first_stop)
        # Ctrl-C again, a moment later: first() then runs in the main thread's own code (run
        # here or at once, it would be raised in this hook, and lost again)
        again = threading.Timer(0.005, os.kill, (os.getpid(), stop))
        again.daemon = True
        again.start()

    sys.unraisablehook = raised_again


def _first_stop(signum: int, frame: Any) -> None:
    """The first Ctrl-C or SIGTERM: KeyboardInterrupt; every later one of either is ignored."""
    for stop in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(stop) is _first_stop:
            signal.signal(stop, signal.SIG_IGN)
    _ctrl_c_pressed.append(signum)
    raise KeyboardInterrupt


def _stop_signal() -> int | None:
    """The signal that stopped the command (None: a KeyboardInterrupt of Python's own)."""
    return _ctrl_c_pressed[0] if _ctrl_c_pressed else None


def stopped_message(report: Any, rerun: str = "") -> str:
    """The one line printed on Ctrl-C (or SIGTERM): stopped, what is stored, what is kept,
    how to resume (``rerun``: the command that writes the summary, for a stop while the
    summary was written).  Before a stage began nothing was written."""
    how = stop_name(_stop_signal())
    if report is not None and report.stage == "summary":
        return summary_stopped_message(report, rerun)
    if report is None or report.stage is None:
        return nothing_written(_stop_signal() or signal.SIGINT)
    kept = kept_checkpoints(report.study_dir)
    if report.computed + report.skipped == 0:
        if not kept:
            return f"stopped ({how}) before any task finished; nothing was stored"
        return f"stopped ({how}) before any task finished; no task was stored; {kept}"
    kept = f"; {kept}" if kept else ""
    return (
        f"stopped ({how}): {report.computed} task(s) of {report.planned} computed in this run "
        f"and stored in {report.study_dir / 'results'} with the {report.skipped} stored before"
        f"{kept}; run the same command again to compute the rest (stored tasks are skipped)"
    )


def kept_checkpoints(study_dir: Path) -> str:
    """What the unfinished tasks' checkpoints keep, for the one line on a stop ("" if none):
    the next run of the same command resumes each task from its own."""
    folder = study_dir / CHECKPOINTS
    try:
        with os.scandir(folder) as entries:
            tasks = [e for e in entries if e.name != "shared" and e.is_dir(follow_symlinks=False)]
    except OSError:
        return ""
    if not tasks:
        return ""
    return (
        f"the checkpoints of {len(tasks)} unfinished task(s) are kept in {folder} "
        "(the same command resumes them)"
    )


def summary_stopped_message(report: Any, rerun: str) -> str:
    """Ctrl-C while the summary was written: the store is whole (the summary reads it, and its
    compaction replaces files whole), what it holds, and the command that writes the summary
    alone."""
    results = report.study_dir / "results"
    computed = report.computed
    this_run = f"{computed} task(s) computed and stored in this run; " if computed else ""
    stored = _stored_counts(results)
    held = (
        f"the store holds {stored[0]} task(s) ({stored[1]} ok) in {results}, intact"
        if stored is not None
        else f"the stored results in {results} are intact"
    )
    rerun = rerun or "the same command with stage=summary"
    return (
        f"stopped ({stop_name(_stop_signal())}) while writing the summary: {this_run}{held}; "
        f"to write the summary: {rerun}"
    )


def _stored_counts(results: Path) -> tuple[int, int] | None:
    """(tasks, ok tasks) the store holds, or None when it cannot be read."""
    try:
        stored = stored_ids(results)
    except Exception:  # noqa: BLE001 - a count for a message, never a new error
        return None
    return len(stored.every), len(stored.ok)


def summary_command() -> str:
    """This run's command with ``stage=summary`` (the summary alone), as a shell line."""
    given = HydraConfig.get().overrides.task
    kept = [o for o in given if o.lstrip("+~").partition("=")[0] != "stage"]
    return shlex.join(["python", "-m", "pipeline", *kept, "stage=summary"])


LONG_RUN = 400  # characters without a space an error line shows whole (a long path too)


def abbreviated(message: str, digits: int = 24, longest: int = LONG_RUN) -> str:
    """``message`` as the one line of an error, the rule of every error line: a character a
    terminal would act on, or that cannot be seen (a line break, a tab, ESC, DEL, U+202E),
    shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``); a run of more than ``digits``
    digits shortened (``99999999...9999 (4000 digits)``); a run of more than ``longest``
    characters without a space (a long value) cut in the middle, its length said."""
    message = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in message
    )

    def short(match: re.Match[str]) -> str:
        run = match.group(0)
        return f"{run[:8]}...{run[-4:]} ({len(run)} digits)"

    def cut(match: re.Match[str]) -> str:
        # KEY=VALUE (VALUE perhaps quoted, a colon or comma after it): the value is cut and
        # counted, the rest kept
        parts = re.fullmatch(r"((?:[^=\s]{1,100}=)?)(['\"]?)(.*?)\2([:;,)]*)", match.group(0))
        key, quote, value, end = parts.groups() if parts else ("", "", match.group(0), "")
        if len(value) <= longest:
            return match.group(0)
        short = f"{value[: longest // 2]}...{value[-longest // 4 :]}"
        return f"{key}{quote}{short}{quote} ({len(value):,} characters){end}"

    message = re.sub(rf"\d{{{digits + 1},}}", short, message)
    return re.sub(rf"\S{{{longest + 1},}}", cut, message)


def main() -> None:
    """Console entry point: check group choices, run Hydra, exit 1 if any task failed."""
    try:
        check_choices(sys.argv[1:])
        check_launcher(sys.argv[1:])
    except StudyError as exc:
        print(f"error: {abbreviated(str(exc))}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt as exc:  # while the config files are checked
        exit_stopped(exc)
    try:
        _main()
    except KeyboardInterrupt as exc:
        exit_stopped(exc)


def exit_stopped(exc: KeyboardInterrupt) -> None:
    """Ctrl-C: the one line, exit 130 (SIGTERM: 143).  In a multirun, what each study folder
    of the sweep stored (its jobs may run in other processes: the driver reads their
    stores)."""
    how = stop_name(_stop_signal())
    line = sweep_stopped_message(how) if is_multirun(sys.argv[1:]) else None
    if line is None:
        line = str(exc) if isinstance(exc, Stopped) else stopped_message(None)
    print(f"\n{line}", file=sys.stderr)
    sys.exit(exit_status(_stop_signal()))


def _main() -> None:
    """Run Hydra (one run or a multirun); exit with the documented status.

    Hydra's own config errors (an unknown key without ``+``, an override it cannot parse, a
    study file that is not YAML) are config errors like any other: one line, exit 2.
    """
    before = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra raises its errors instead of exit(1)
    try:
        _run_or_multirun()
    except (HydraException, OmegaConfBaseException, yaml.YAMLError) as exc:
        if before == "1":  # the user asked for Hydra's full traces
            raise
        print(f"error: {abbreviated(hydra_error_line(exc))}", file=sys.stderr)
        sys.exit(2)
    except TypeError:  # Hydra deletes with a key's text: a list's item raises TypeError
        deleted = list_item_deleted(sys.argv[1:])
        if deleted is None or before == "1":
            raise
        print(f"error: {abbreviated(deleted)}", file=sys.stderr)
        sys.exit(2)
    except SweepRefused as exc:  # a multirun job refused before the sweep began
        print(f"error: {abbreviated(str(exc))}", file=sys.stderr)
        sys.exit(2)
    finally:
        if before is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = before


def list_item_deleted(argv: list[str]) -> str | None:
    """The line for ``~KEY.N``, the deletion of a list's item, which Hydra cannot do (it
    deletes a mapping's keys), or None when no override deletes one."""
    for arg in argv:
        key = arg.partition("=")[0]
        if key.startswith("~") and "." in key and key.rpartition(".")[2].isdigit():
            whole = key[1:].rpartition(".")[0]
            return (
                f"{arg}: an item of a list ({whole}) cannot be deleted by an override, only a "
                f"key of a mapping; give the list whole ({whole}=[...]) or write a study file "
                "of your own (--config-dir)"
            )
    return None


def hydra_error_line(exc: BaseException) -> str:
    """Hydra's config error as guesslab's one line: the override or key first."""
    override = getattr(exc, "override", None)
    if override is not None:  # OverrideParseException
        return f"{override}: cannot read this override ({one_line(exc)})"
    unknown = re.match(r"Could not override '([^']+)'", str(exc))
    if unknown:
        # the key OmegaConf refused: the override's own, or one inside a mapping it gives
        # ('study.strategies={info: {}}' adds study.strategies.info)
        key = getattr(exc.__cause__, "full_key", None) or unknown.group(1)
        return f"{key}: unknown key (to add a key the config does not have: +{key}=...)"
    return one_line(exc)


def one_line(exc: BaseException) -> str:
    """A Hydra or OmegaConf error message in one line (its lines joined, the object dumps
    Hydra appends left out)."""
    skip = ("full_key:", "object_type=", "reference_type=", "See https://hydra.cc")
    lines = [line.strip() for line in str(exc).splitlines()]
    text = " ".join(line for line in lines if line and not line.startswith(skip))
    text = text or type(exc).__name__
    key = getattr(exc, "full_key", None)  # OmegaConf's errors know the key
    return f"{key}: {text}" if key and not text.startswith(str(key)) else text


def _run_or_multirun() -> None:
    _failed_tasks.clear()  # this run's failures only (main may run twice in one process)
    if not is_multirun(sys.argv[1:]):
        hydra_main()
        if _failed_tasks:
            sys.exit(1)
        return
    status = run_multirun()
    if status:
        sys.exit(status)


def run_multirun() -> int:
    """Run Hydra's multirun; the exit status of the first failed job, or 0.

    Needs HYDRA_FULL_ERROR=1 (set by :func:`main`) so that a job's JobFailed reaches here.
    """
    try:
        hydra_main()
    except JobFailed as exc:  # every job ran; each failed one printed its reason
        print(f"multirun: a job failed ({exc})", file=sys.stderr)
        return exc.status
    return 0


def cli() -> None:
    """The ``guesslab`` command (and ``python -m pipeline``): :func:`main` in a process that
    ends with it, so the interpreter's last collection is skipped (:mod:`pipeline.heap`:
    0.2-0.5 s of every command's exit)."""
    stop_on_first_ctrl_c()
    remember_command()  # the command a multirun job in another process names
    try:
        main()
    finally:
        frozen_for_exit()


if __name__ == "__main__":
    cli()
