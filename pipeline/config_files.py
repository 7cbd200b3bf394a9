"""The config files a command reads, found where Hydra finds them and read safely first.

:class:`ConfigFiles` asks a Hydra config search path which file a config group's choice is
and which choices a group has: a command line's (:func:`command_line_files`: ``hydra.conf``,
guesslab's ``pipeline.conf``, the search-path plugins, ``--config-dir``, then
``hydra.searchpath`` from the command line or the primary config, as Hydra builds it) or a
running job's (:func:`job_files`), so that a file checked or named is the one Hydra reads.
:func:`check_yaml` reads a file before Hydra does: Hydra would take any time and memory over
an alias bomb, and a traceback over a file that is not UTF-8.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path
from typing import Any

import yaml
from hydra.core.config_search_path import SearchPathQuery
from hydra.core.object_type import ObjectType

from pipeline.errors import StudyError

# Hydra's search path costs the checks 3-7 ms more than a copy of it did (median of 15
# calls choosing a shipped two-grid study: 59 ms against 52, load average 12 on 2 cores),
# and its plugin scan (45-60 ms once a process) moves from Hydra's start to here: no reason
# for a copy.
MAIN_CONFIGS = "pkg://pipeline.conf"  # @hydra.main's config_path (pipeline/__main__.py)
MAX_DIGITS = 4300  # Python reads no longer integer (sys.get_int_max_str_digits())
MAX_NODES = 1_000_000  # values in a config file once its aliases are expanded


class ConfigFiles:
    """The config files of one Hydra search path (``search_path``: a ConfigSearchPath)."""

    def __init__(self, search_path: Any):
        from hydra._internal.config_repository import ConfigRepository

        self.repository = ConfigRepository(search_path)

    def options(self, group: str) -> list[str]:
        """The config names of ``group`` (``study``: its study files' names)."""
        return self.repository.get_group_options(group, ObjectType.CONFIG)

    def file(self, group: str, name: str) -> Path | None:
        """The file Hydra takes for ``group=name`` (group "": a primary config), or None."""
        path = f"{group}/{name}" if group else name
        path = path if path.endswith(".yaml") else f"{path}.yaml"
        for source in self.repository.get_sources():
            if source.is_config(path):
                if source.scheme() == "file":
                    return Path(source.path) / path
                if source.scheme() == "pkg":
                    return Path(str(importlib.resources.files(source.path).joinpath(path)))
                return None  # a structured config (Python): nothing to read
        return None


def command_line_files(
    config_dir: str | None, config_name: str, overrides: list[str]
) -> tuple[ConfigFiles, Any]:
    """The config files Hydra reads for a command line (``config_dir``: its
    ``--config-dir``), and its primary config ``config_name``'s content, read safely
    (:func:`check_yaml`) first, as Hydra reads it first (for its ``hydra.searchpath``)."""
    from hydra._internal.utils import create_config_search_path

    search_path = create_config_search_path(MAIN_CONFIGS)
    if config_dir is not None:  # where Hydra's _run_hydra puts --config-dir
        where = SearchPathQuery(provider="schema")
        search_path.prepend("command-line", f"file://{os.path.abspath(config_dir)}", where)
    primary = check_yaml(ConfigFiles(search_path).file("", config_name))
    entries = _searchpath(overrides, primary)
    if entries:  # where Hydra's ConfigLoaderImpl._process_config_searchpath puts them
        schema = search_path.get_path().pop(-1)
        for entry in entries:
            search_path.append("hydra.searchpath", entry)
        search_path.get_path().append(schema)
    return ConfigFiles(search_path), primary


def job_files(config_sources: Any) -> ConfigFiles:
    """The config files of a running job: the search path its config records
    (``hydra.runtime.config_sources``)."""
    from hydra._internal.config_search_path_impl import ConfigSearchPathImpl

    search_path = ConfigSearchPathImpl()
    for source in config_sources:
        search_path.append(source.provider, f"{source.schema}://{source.path}")
    return ConfigFiles(search_path)


def defaults(primary: Any) -> dict[str, Any]:
    """The group choices of a primary config's defaults list (``- study: paper``)."""
    entries = primary.get("defaults") if isinstance(primary, dict) else None
    found: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            found.update(entry)
    return found


def _searchpath(overrides: list[str], primary: Any) -> list[str]:
    """The ``hydra.searchpath`` entries Hydra adds (an override's, else the primary
    config's); none when Hydra would refuse them (it then says why)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    given = [o for o in overrides if o.partition("=")[0] == "hydra.searchpath"]
    try:
        parsed = OverridesParser.create().parse_overrides(given[:1])
    except HydraException:
        return []
    hydra_node = primary.get("hydra") if isinstance(primary, dict) else None
    in_primary = hydra_node.get("searchpath") if isinstance(hydra_node, dict) else None
    entries = parsed[0].value() if parsed else in_primary
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return []
    return entries


def check_yaml(path: Path | None) -> Any:
    """A config file's content, read safely; StudyError naming the file (and the line, or
    the key) for one Hydra could not read in one line and in bounded time: not UTF-8, not
    YAML, an alias inside itself, aliases expanding to more than MAX_NODES values, an
    integer of more than MAX_DIGITS digits."""
    if path is None:
        return None
    return yaml_content(path.read_bytes(), path)


def yaml_content(data: bytes, path: Path) -> Any:
    """The content of a config file's bytes ``data``, read as :func:`check_yaml` reads the
    file ``path`` (for a caller that opened the file its own way); StudyError the same."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
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
