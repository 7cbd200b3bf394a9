"""The command line checked before Hydra reads it: one line naming the argument, exit 2.

Only what Hydra does not check itself, or checks with a traceback or without bound: a
``--config-dir`` that is no folder, an unknown study/cluster/paths name (the valid ones
listed), a config file Hydra would read that it cannot read safely
(:func:`pipeline.config_files.check_yaml`), the deletion of what every run needs, an override
whose number, key or list is too long to read, and a multirun launcher that is unknown or
not installed.  The config files are found where Hydra finds them
(:class:`pipeline.config_files.ConfigFiles`).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.config_files import (
    MAX_DIGITS,
    ConfigFiles,
    check_yaml,
    command_line_files,
    defaults,
)
from pipeline.errors import StudyError, short_repr

CHOICE_GROUPS = ("study", "cluster", "paths")
CONFIG_DIR = ("--config-dir", "-cd")  # Hydra's options, long and short
CONFIG_NAME = ("--config-name", "-cn")
MAX_KEY = 200  # characters of an override's key (Hydra looks it up as a file name)
# values in the lists of one override: Hydra's parser takes time that grows faster than the
# square of their number (0.5 s for 2,000, 19 s for 10,000, most of an hour for 50,000)
MAX_LIST_ITEMS = 2000


def check_command_line(argv: list[str]) -> None:
    """StudyError, naming the argument, for the first of ``argv`` (the command's arguments)
    that :mod:`pipeline.cli.preflight` refuses."""
    check_config_dirs(argv)
    check_override_numbers(argv)
    check_override_keys(argv)
    check_override_lists(argv)
    dirs, names = flag_values(argv, CONFIG_DIR), flag_values(argv, CONFIG_NAME)
    config_dir = dirs[-1][1] if dirs else None  # Hydra takes the last
    files, primary = command_line_files(config_dir, names[-1][1] if names else "config", argv)
    check_deletions(argv, files)
    check_choices(argv, files, defaults(primary))
    check_launcher(argv)


def flag_values(argv: Sequence[str], flags: tuple[str, ...]) -> list[tuple[str, str]]:
    """(flag, value) of each of Hydra's options ``flags`` (spellings of one option) given in
    ``argv``, as ``FLAG VALUE`` or ``FLAG=VALUE``, in order (Hydra takes the last)."""
    found = []
    for i, arg in enumerate(argv):
        for flag in flags:
            if arg == flag and i + 1 < len(argv):
                found.append((flag, argv[i + 1]))
            elif arg.startswith(flag + "="):
                found.append((flag, arg.split("=", 1)[1]))
    return found


def is_multirun(argv: Sequence[str]) -> bool:
    """Whether the command line asks Hydra for a multirun (-m / --multirun)."""
    return any(arg in ("-m", "--multirun") for arg in argv)


def check_config_dirs(argv: list[str]) -> None:
    """Refuse a ``--config-dir`` (``-cd``) that is not a folder, before Hydra searches it
    (Hydra reads the path as given, ``~`` included: the shell expands it)."""
    for flag, value in flag_values(argv, CONFIG_DIR):
        folder = Path(value)
        if not folder.is_dir():
            what = "not a folder" if folder.exists() else "no such folder"
            where = "" if str(folder.resolve()) == value else f" ({folder.resolve()})"
            raise StudyError(f"{flag}={value!r}: {what}{where}")


def check_choices(argv: list[str], files: ConfigFiles, chosen_first: dict[str, Any]) -> None:
    """Refuse an unknown study/cluster/paths name on the command line, listing valid ones,
    and any config file Hydra will read that it cannot read safely (:func:`check_yaml`): the
    files chosen on the command line and, for a group not chosen there, the primary config's
    default (of ``chosen_first``, its defaults list)."""
    chosen = set()
    for arg in argv:
        key, sep, value = arg.lstrip("+~").partition("=")
        if not sep or key not in CHOICE_GROUPS:
            continue
        chosen.add(key)
        valid = files.options(key)
        if value.lstrip().startswith(("{", "[")):  # a mapping or a list, not a name
            raise StudyError(
                f"{key}={value!r}: a {key} is chosen by name, {key}=NAME ({', '.join(valid)}); "
                f"to change one of its keys: {key}.KEY=VALUE"
            )
        for choice in _sweep_values(value):
            if choice not in valid:
                shown = short_repr(choice)
                raise StudyError(f"{key}={shown}: unknown {key}; valid: {', '.join(valid)}")
            check_yaml(files.file(key, choice))
    for group, choice in chosen_first.items():
        if group in CHOICE_GROUPS and group not in chosen and isinstance(choice, str):
            check_yaml(files.file(group, choice))


def _sweep_values(value: str) -> list[str]:
    if value.startswith(("choice(", "range(", "glob(")):
        return []  # Hydra's sweep functions: let Hydra resolve them
    return [v.strip() for v in value.split(",") if v.strip()]


def check_deletions(argv: list[str], files: ConfigFiles) -> None:
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
            instead = f"choose one instead: {key}=NAME ({', '.join(files.options(key))})"
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


# launcher name -> (plugin module, what to install)
LAUNCHERS: dict[str, tuple[str | None, str]] = {
    "basic": (None, "hydra-core"),
    "joblib": ("hydra_plugins.hydra_joblib_launcher", "pip install hydra-joblib-launcher"),
    "submitit_local": (
        "hydra_plugins.hydra_submitit_launcher",
        "pip install hydra-submitit-launcher",
    ),
    "submitit_slurm": (
        "hydra_plugins.hydra_submitit_launcher",
        "pip install hydra-submitit-launcher",
    ),
    "dask": (
        "hydra_plugins.guesslab_dask_launcher",
        "pip install -e . in the guesslab checkout (the plugin ships with guesslab)",
    ),
}
NEEDS_SLURM = ("submitit_slurm",)


def check_launcher(argv: Sequence[str]) -> None:
    """Refuse an unknown or uninstalled multirun launcher (``hydra/launcher=NAME``), or
    Slurm's without Slurm, before any work: Hydra itself only says it cannot find the config
    group option; this names the package to install (or Slurm to start)."""
    for name in chosen_launchers(argv):
        if name not in LAUNCHERS:
            raise StudyError(
                f"hydra/launcher={name!r}: unknown launcher; valid: {', '.join(LAUNCHERS)}"
            )
        module, install = LAUNCHERS[name]
        if module is not None and not _importable(module):
            raise StudyError(
                f"hydra/launcher={name}: the launcher plugin is not installed; {install}"
            )
        if name in NEEDS_SLURM and shutil.which("sbatch") is None:
            raise StudyError(
                f"hydra/launcher={name}: Slurm is not available here (no sbatch on PATH); "
                "run on a Slurm login node or start Slurm (scripts/slurm_setup.sh sets up a "
                "single-node one), or use hydra/launcher=joblib"
            )


def chosen_launchers(argv: Sequence[str]) -> list[str]:
    """The launcher names chosen with hydra/launcher=NAME on the command line."""
    out = []
    for arg in argv:
        key, sep, value = arg.lstrip("+~").partition("=")
        if sep and key == "hydra/launcher":
            out.append(value.strip())
    return out


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
