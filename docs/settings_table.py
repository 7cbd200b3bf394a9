"""MkDocs hook: the settings reference, generated from the typed config and conf/.

A page marks the place of the reference with ``<!-- settings -->``; :func:`on_page_markdown`
replaces it with one table per section (``stage``, ``store.*``, ``run.*``, ``paths.*``, and
``cluster.*`` for each cluster kind).  Each row is one key:

- its **type**: what :mod:`pipeline.config`'s model of the section accepts, in the words its
  check refuses a wrong value with (the line a user sees after ``error: KEY=VALUE:``);
- its **default**: the value in conf/ (``conf/config.yaml``, ``conf/paths/default.yaml``,
  ``conf/cluster/KIND.yaml``), which holds every default once;
- its **meaning**: the comment beside the key in that file (with the comment lines indented
  under it); a cluster kind's ``kind`` takes the file's opening comment.

The keys are those of the models; a model key that conf/ leaves out, a conf/ key the model
does not know, or a key with no comment fails the build, naming the key, so the manual
cannot drift from the config.  This module imports :mod:`pipeline.config` only (docs/hooks.py
keeps to ``solvers``); the config finds each cluster kind's model among the registered backends
(:func:`pipeline.config.cluster_models`), so a registered kind has its section.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError  # noqa: E402

from pipeline import config  # noqa: E402

CONF = ROOT / "conf"
MARKER = re.compile(r"<!--\s*settings\s*-->")
KEY_LINE = re.compile(r"^(\s*)([A-Za-z_]\w*):(.*)$")
COMMENT_LINE = re.compile(r"^(\s*)#\s?(.*)$")
INLINE_COMMENT = re.compile(r"\s#\s?(.*)$")


class SettingsError(ValueError):
    """The models and conf/ disagree on a key, or a key in conf/ has no comment."""


@dataclass(frozen=True)
class Setting:
    key: str  # dotted, as on the command line: run.batch_size, cluster.tls.ca_file
    accepts: str  # the type, in the words of the check
    default: str  # conf/'s value, as YAML writes it
    meaning: str  # conf/'s comment


def conf_comments(path: Path) -> tuple[str, dict[str, str]]:
    """``path``'s opening comment and the comment of each key (dotted by its nesting), with
    the comment-only lines indented under a key joined to it."""
    header: list[str] = []
    comments: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []  # (indent, key) of the keys enclosing the line
    last: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := KEY_LINE.match(line):
            indent, key, rest = len(match.group(1)), match.group(2), match.group(3)
            stack = [(i, k) for i, k in stack if i < indent]
            dotted = ".".join([k for _, k in stack] + [key])
            stack.append((indent, key))
            found = INLINE_COMMENT.search(rest)
            comments[dotted] = [found.group(1).strip()] if found else []
            last = dotted
        elif match := COMMENT_LINE.match(line):
            if last is None:
                header.append(match.group(2).strip())
            elif match.group(1):  # indented: it goes on with the key above
                comments[last].append(match.group(2).strip())
            else:
                last = None  # a comment at the margin belongs to no key
        elif line.strip():
            last = None
    return " ".join(header), {k: " ".join(v) for k, v in comments.items()}


def yaml_text(value: Any) -> str:
    """A default as YAML writes it: ``null``, ``true``, ``[]``, ``2GiB``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "" if value == config.REQUIRED else value  # the user gives it
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


PLAIN_WORDS = {str: "text", int: "an integer", bool: "true or false", type(None): "null"}


def annotation_words(annotation: Any) -> str:
    """A plain annotation in words: ``str | None`` is "text or null"."""
    if annotation in PLAIN_WORDS:
        return PLAIN_WORDS[annotation]
    if get_origin(annotation) is list:
        return f"a list of {annotation_words(get_args(annotation)[0])}"
    args = get_args(annotation)
    if args:
        return " or ".join(annotation_words(a) for a in args)
    return str(annotation)


STRICT = ConfigDict(strict=True)


def accepts(model: type[BaseModel], name: str) -> str:
    """What ``model``'s field ``name`` accepts, in the words its check refuses a value of the
    wrong kind with (an object no config can hold); a plain annotation's type in words."""
    field = model.model_fields[name]
    annotation = field.annotation
    if get_origin(annotation) is Literal:
        return " or ".join(f"`{a}`" for a in get_args(annotation))
    checked = Annotated[(annotation, *field.metadata)] if field.metadata else annotation
    adapter = TypeAdapter(checked, config=STRICT)
    try:
        adapter.validate_python(object())
    except ValidationError as exc:
        words = exc.errors(include_url=False)[0]["msg"]
    else:  # pragma: no cover - every field refuses an arbitrary object
        raise SettingsError(f"{model.__name__}.{name} accepts any value: say what it takes")
    if not words.startswith("Value error, "):  # pydantic's own: the annotation says it
        return annotation_words(annotation)
    words = words.removeprefix("Value error, ").removeprefix("must be ").removeprefix("give ")
    words = re.sub(r"^unknown; valid: ", "one of ", words).removeprefix("it as ")
    try:
        adapter.validate_python(None)
    except ValidationError:
        return words
    return words if "null" in words else f"{words}, or null"


def section(
    model: type[BaseModel], defaults: dict, comments: dict, key: str, where: str = ""
) -> list[Setting]:
    """The settings of ``model`` (nested models flattened), named ``key.NAME``, against the
    ``defaults`` and ``comments`` of the place ``where`` (dotted) of a conf/ file;
    SettingsError for a key that one side lacks or that has no comment."""
    extra = set(defaults) - set(model.model_fields)
    if extra:
        raise SettingsError(f"conf/ sets {key}.{sorted(extra)[0]}, which the config refuses")
    rows = []
    for name, field in model.model_fields.items():
        dotted, here = f"{key}.{name}", f"{where}.{name}".lstrip(".")
        if name not in defaults:
            raise SettingsError(f"{dotted} has no default in conf/ (conf/ holds every default)")
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            rows += section(nested, defaults[name] or {}, comments, dotted, here)
            continue
        if not comments.get(here):
            raise SettingsError(f"{dotted}: no comment beside it in conf/ to say what it means")
        rows.append(
            Setting(dotted, accepts(model, name), yaml_text(defaults[name]), comments[here])
        )
    return rows


def main_sections() -> dict[str, list[Setting]]:
    """``stage``, ``store.*``, ``run.*`` (conf/config.yaml) and ``paths.*``
    (conf/paths/default.yaml), by section."""
    path = CONF / "config.yaml"
    defaults = yaml.safe_load(path.read_text(encoding="utf-8"))
    _, comments = conf_comments(path)
    if not comments.get("stage"):
        raise SettingsError("stage: no comment beside it in conf/config.yaml")
    stage = Setting("stage", accepts(config.Config, "stage"), defaults["stage"], comments["stage"])
    out = {"stage": [stage]}
    for name, model in (("store", config.StoreConfig), ("run", config.RunConfig)):
        out[name] = section(model, defaults[name], comments, name, name)
    paths_file = CONF / "paths" / "default.yaml"
    _, path_comments = conf_comments(paths_file)
    paths = yaml.safe_load(paths_file.read_text(encoding="utf-8"))
    out["paths"] = section(config.PathsConfig, paths, path_comments, "paths")
    return out


def cluster_sections() -> dict[str, tuple[str, list[Setting]]]:
    """Each cluster kind's settings (conf/cluster/KIND.yaml against its model), with the
    file's opening comment, by kind."""
    out = {}
    for kind, model in config.cluster_models().items():
        path = CONF / "cluster" / f"{kind}.yaml"
        header, comments = conf_comments(path)
        if not header:
            raise SettingsError(f"conf/cluster/{kind}.yaml: no opening comment to say what it is")
        comments = {**comments, "kind": f"`cluster={kind}` selects this kind"}
        defaults = yaml.safe_load(path.read_text(encoding="utf-8"))
        out[kind] = (header, section(model, defaults, comments, "cluster"))
    return out


def cell(text: str) -> str:
    """Text for a Markdown table cell (a ``|`` escaped)."""
    return text.replace("|", "\\|")


def table(rows: list[Setting]) -> str:
    head = ["| key | type | default | meaning |", "|---|---|---|---|"]
    body = [
        f"| `{s.key}` | {cell(s.accepts)} | {f'`{cell(s.default)}`' if s.default else 'none'} "
        f"| {cell(s.meaning)} |"
        for s in rows
    ]
    return '<div class="param-table" markdown>\n\n' + "\n".join(head + body) + "\n\n</div>\n"


TITLES = {
    "stage": "What a run does: `stage`",
    "store": "The store: `store.*`",
    "run": "Batching, limits and progress: `run.*`",
    "paths": "Where results land: `paths.*`",
}


def settings_markdown() -> str:
    """The settings reference: a section and a table for each part of the config."""
    parts = []
    for name, rows in main_sections().items():
        parts += [f"## {TITLES[name]}", "", table(rows)]
    for kind, (header, rows) in cluster_sections().items():
        parts += [f"## `cluster={kind}`", "", cell(header), "", table(rows)]
    return "\n".join(parts)


def all_settings() -> list[Setting]:
    """Every setting the reference lists, in its order."""
    rows = [s for part in main_sections().values() for s in part]
    return rows + [s for _, part in cluster_sections().values() for s in part]


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page's Markdown with ``<!-- settings -->`` replaced by the reference (MkDocs hook)."""
    return MARKER.sub(lambda _: settings_markdown(), markdown)
