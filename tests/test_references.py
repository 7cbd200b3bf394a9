"""Every name the code and the manual give of the project exists.

Scanned: the docstrings and comments of every Python file (the packages, scripts/,
benchmarks/, tests/, conf/, docs/hooks.py) and the manual (docs/*.md, README.md).  Checked:

- a name of the packages (``pipeline.storage.store.load_results``,
  ``solvers.card_guessing.tasks:split_rows``, ``from solvers.kit import task_context``): the
  module imports, the attribute is there;
- a cross-reference (:func:`task_context.current`; in a package also relative, ``.cards``) and
  a dotted name in backticks
  (``yes_no.Evaluation``, ``Scheduling.needs``, ``run.batch_seconds``): what it starts with is
  the file's own name or import, a module of the project, a class of the project, a config
  section (checked against the config models), a variable of the same file, or a module
  outside (``np.memmap``), and the rest resolves from there;
- a file or folder path (``solvers/kit/checkpoints.py``, ``tasks/ranked_tasks.py``,
  ``any_deck/``, ``docs/games/high_low.md``): a file or folder of the repository, named whole or
  by its last parts.  A path with a part in angle brackets (``<study>/checkpoints/``,
  ``conf/study/<name>.yaml``) is one a run or a user makes, not checked; ``NAME`` in a path
  stands for any name (``conf/study/NAME.yaml``: a file there).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import io
import re
import subprocess
import tokenize
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.helpers.repository import ROOT

PACKAGES = ("pipeline", "solvers", "hydra_plugins")  # the importable packages of the project
PYTHON_FOLDERS = (*PACKAGES, "scripts", "benchmarks", "tests", "conf", "docs")
# what a run, a command or a user makes, named in the manual: no file of the repository
MADE_FILES = {"summary.md", "report.html", "index.html", "multirun.yaml", "cluster/mylab.yaml"}
MADE_FOLDERS = {"checkpoints/", "damaged/", "quarantine/", "runs/", "results/", "certs/"}
MADE_FOLDERS |= {"shared/", "build/", "site/", "layer-037/", "outputs/paper/results/"}
# the files of a user's own strategy in the manual's example (docs/own-strategy.md)
MADE_FILES |= {"mystrat.py", "studies/study/switch.yaml", "myhighlow.py", "mymastermind.py"}
MADE_FILES |= {"myhands.py"}
# the tutorial's files (docs/tutorial/), the notebook as the reader downloads it, the
# Material theme's script, and a cluster kind's config file named by its kind
MADE_FILES |= {"studies/study/mine.yaml", "study.ipynb", "bundle.js"}
MADE_FILES |= {"conf/cluster/KIND.yaml", "cluster/KIND.yaml"}
MADE_FOLDERS |= {"outputs/paper/"}
MADE_FOLDERS |= {"studies/study/", "quarantine/search/"}
# outside libraries' classes the code names by their class name alone
OUTSIDE_CLASSES = {
    "Client": "distributed.Client",
    "Worker": "distributed.Worker",
    "Security": "distributed.security.Security",
    "DataFrame": "pandas.DataFrame",
    "Figure": "matplotlib.figure.Figure",
}
OUTSIDE_ALIASES = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot", "pl": "polars"}
PLACEHOLDER = "NAME"  # conf/study/NAME.yaml: any file of conf/study/
NOT_MODULES = {
    "guesslab.families": "the entry point group families register in",
    "guesslab.backends": "the entry point group backends of one's own are found in",
    "mystrat.SwitchAfterNo": "a user's own strategy class, the manual's example",
    "client.map": "a Dask client's map, a contender of benchmarks/bench_startup.py",
    "module.Class": "how --strategy names a user's own class",
    "hydra.searchpath": "a key of Hydra's own config",
    "hydra.conf": "Hydra's config package",
    "hydra.runtime.config_sources": "a key of Hydra's own config",
    "hydra.overrides.task": "a key of Hydra's own config",
    "hydra.job.num": "a key of Hydra's own config",
    "hydra.job.id": "a key of Hydra's own config",
}

PACKAGE = "(?:" + "|".join(PACKAGES) + ")"
NAMED_FILES = ("py", "md", "yaml", "yml", "toml", "js", "css", "sh", "cff")  # what a path may name
SUFFIXES = "(?:" + "|".join(NAMED_FILES) + ")"
# a cross-reference: :func:`task_context.current` (in a package also a sibling's, after a dot)
ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?(\.?[A-Za-z_][\w.]*)`")
# a dotted name in backticks: ``yes_no.Evaluation``, `run.batch_seconds`, ``Checkpoints.path(n)``
TICKED = re.compile(r"(?<![\w`])`{1,2}([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`{1,2}")
# a name of the packages anywhere: pipeline.storage.store, solvers.card_guessing.tasks:split_rows
ROOTED = re.compile(
    r"(?<![\w./-])(" + PACKAGE + r"(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?)(?![\w/-]|\.\w)"
)
IMPORT = re.compile(r"\bfrom (" + PACKAGE + r"[\w.]*) import (\w+(?:, \w+)*)")
PATH = re.compile(
    r"(?<![\w.<>{}~$*/-])((?:\.{1,3}/)*(?:[\w.-]+/)*[\w-]+\." + SUFFIXES + r")(?![\w/])"
)
FOLDER = re.compile(r"(?<![\w./<>{}~$*:-])((?:[A-Za-z_][\w-]+/)+)(?=[\s,;:)'\"`]|\.(?:\s|$)|$)")
# in a docstring or comment, a dotted name without backticks that starts with a module or
# a class of the project (``see yes_no.Evaluation``)
PLAIN = re.compile(r"(?<![\w.`/:~-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w`/-]|\.\w)")
REFUSED_KEYS = {"run.foo", "study.foo"}  # the unknown keys the code shows being refused
OTHER_FILES = ("html", "json", "parquet", "pem", "png", "txt", "log", "csv", "ipynb")
FILE_LIKE = re.compile(r"\.(?:" + "|".join((*NAMED_FILES, *OTHER_FILES)) + ")$")


@dataclass(frozen=True)
class Text:
    """A docstring, a comment or a page of the manual, and where it is."""

    path: Path
    line: int
    text: str


def module_of(path: Path) -> str | None:
    """The importable module at ``path`` (``pipeline.storage.store``), or None outside the
    packages."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] not in PACKAGES:
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def repo_paths() -> tuple[frozenset[str], frozenset[str]]:
    """The repository's files (git's and new ones it would track) and folders (``solvers/``)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    files = {line for line in out.splitlines() if (ROOT / line).exists()}
    folders = {"/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/") + 1)}
    return frozenset(files), frozenset(folders)


def python_texts(path: Path) -> Iterator[Text]:
    """The docstrings and the comments of a Python file."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                yield Text(path, node.body[0].lineno, doc)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield Text(path, tok.start[0], tok.string)


def manual_texts() -> Iterator[Text]:
    """The manual's pages, a text per line (so a failure names its line)."""
    for page in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            yield Text(page, number, line)


def all_texts() -> Iterator[Text]:
    for folder in PYTHON_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield from python_texts(path)
    yield from manual_texts()


# ------------------------------------------------------------------------ names in Python


def find_spec(name: str) -> object | None:
    """The spec of the module ``name``, or None (none there, or its parent no package)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def has_attribute(obj: object, name: str) -> bool:
    """An attribute, or for a class a field (dataclass, pydantic, annotated) or an attribute
    its methods set on ``self``."""
    if hasattr(obj, name):
        return True
    if not isinstance(obj, type):
        return False
    for cls in obj.__mro__:
        fields = {
            *getattr(cls, "__dataclass_fields__", {}),
            *getattr(cls, "model_fields", {}),
            *getattr(cls, "__annotations__", {}),
        }
        if name in fields:
            return True
        try:
            if re.search(rf"\bself\.{name}\s*[:=]", inspect.getsource(cls)):
                return True
        except (OSError, TypeError):
            continue
    return False


def walk(obj: object, attrs: list[str]) -> bool:
    """Whether ``obj.a.b...`` exists, importing sub-modules on the way."""
    for attr in attrs:
        if isinstance(obj, types.ModuleType) and not hasattr(obj, attr):
            name = f"{obj.__name__}.{attr}"
            if find_spec(name) is None:
                return False
            obj = importlib.import_module(name)
        elif not has_attribute(obj, attr):
            return False
        elif not hasattr(obj, attr):
            return True  # a field or an instance attribute: nothing to walk into
        else:
            obj = getattr(obj, attr)
    return True


def resolves_rooted(name: str) -> bool:
    """``pipeline.storage.store.load_results`` or ``module:function``: the longest prefix that is a
    module imports, the rest are its attributes."""
    module, _, function = name.partition(":")
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        if find_spec(".".join(parts[:i])) is not None:
            obj = importlib.import_module(".".join(parts[:i]))
            return walk(obj, parts[i:] + ([function] if function else []))
    return False


def package_modules() -> Iterator[tuple[str, Path]]:
    """(name, path) of every module of the packages."""
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield module_of(path), path


@cache
def project_modules() -> dict[str, list[str]]:
    """Every module of the packages by its last name: ``yes_no`` -> [its full names]."""
    out: dict[str, list[str]] = {}
    for name, _ in package_modules():
        out.setdefault(name.rpartition(".")[2], []).append(name)
    return out


@cache
def project_classes() -> dict[str, list[str]]:
    """Every class the packages define at a module's top, by name -> [module, ...]."""
    out: dict[str, list[str]] = {}
    for name, path in package_modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(name)
    return out


@cache
def bound_names(path: Path) -> frozenset[str]:
    """Every name a file binds anywhere: functions, classes, parameters, assignments, imports
    (for a page of the manual: ``name =`` in its text)."""
    text = path.read_text()
    if path.suffix != ".py":
        return frozenset(re.findall(r"\b([A-Za-z_]\w*)\s*=(?!=)", text))
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
    return frozenset(out)


def package_of(path: Path) -> str | None:
    module = module_of(path)
    if module is None or path.name == "__init__.py":
        return module
    return module.rpartition(".")[0]


@cache
def config_sections() -> dict[str, object]:
    """The config's top-level keys -> their model (or a union of models, or Hydra's mapping)."""
    import dataclasses

    from hydra_plugins.guesslab_sweeper.config import GuesslabSweeperConf
    from pipeline.config import Config, cluster_models

    hydra = yaml.safe_load((ROOT / "conf" / "config.yaml").read_text())["hydra"]
    # hydra/sweeper=guesslab's settings (hydra.sweeper.n_trials ...)
    hydra["sweeper"] = {f.name: None for f in dataclasses.fields(GuesslabSweeperConf)}
    sections: dict[str, object] = {k: f.annotation for k, f in Config.model_fields.items()}
    # cluster.*: a key of any registered backend's settings model
    sections["cluster"] = typing.Union[tuple(cluster_models().values())]  # noqa: UP007
    return {**sections, "hydra": hydra}


def models_of(annotation: object) -> list[object]:
    """The pydantic models an annotation allows (``A | None``, ``Annotated[A | B, ...]``)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return models_of(args[0])
    if args and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for a in args for m in models_of(a)]
    if typing.get_origin(annotation) is list:
        return models_of(args[0])
    return [annotation] if hasattr(annotation, "model_fields") else []


def config_key_exists(name: str) -> bool:
    """``run.batch_seconds``, ``cluster.tls.ca_file``, ``study.grid.deck``, ``hydra.sweep.dir``:
    a key of the config (after a free mapping such as ``grid``, anything)."""
    first, *rest = name.split(".")
    if first not in config_sections():
        return False
    node = config_sections()[first]
    for key in rest:
        if isinstance(node, dict):
            if key not in node:
                return False
            node = node[key]
            continue
        models = models_of(node)
        if not models:
            return True  # a mapping of the study's own (grid, strategies)
        fields = [m.model_fields[key] for m in models if key in m.model_fields]
        if not fields:
            return False
        node = fields[0].annotation
    return True


def resolves_short(name: str, path: Path) -> bool:
    """A name as a file writes it: its own or an imported name, a sibling module, a module or
    class of the project, a config key, a variable of the file, an outside module."""
    if name in NOT_MODULES:
        return True
    first, *rest = name.split(".")
    if first in PACKAGES:
        return resolves_rooted(name)
    package, module = package_of(path), module_of(path)
    if name.startswith("."):
        return package is not None and resolves_rooted(package + name)
    if module is not None and first in vars(importlib.import_module(module)):
        return walk(vars(importlib.import_module(module))[first], rest)
    if package is not None and resolves_rooted(f"{package}.{name}"):
        return True
    if (path.parent / f"{first}.py").exists() and module is None:  # a script's sibling
        return not rest or rest[0] in bound_names(path.parent / f"{first}.py")
    outside = OUTSIDE_CLASSES.get(first) or OUTSIDE_ALIASES.get(first)
    found = [
        *(resolves_rooted(".".join([m, *rest])) for m in project_modules().get(first, [])),
        *(resolves_rooted(".".join([m, name])) for m in project_classes().get(first, [])),
        *([config_key_exists(name)] if first in config_sections() else []),
        *([resolves_outside(outside, rest)] if outside else []),
    ]
    if found:
        return any(found)
    if first in bound_names(path):
        return True  # a variable of the file: what it holds is not known here
    if first == "distributed" and dask_config_key(name):
        return True
    if hasattr(builtins, first):
        return walk(getattr(builtins, first), rest)
    return name in NOT_MODULES or (find_spec(first) is not None and resolves_outside(first, rest))


def dask_config_key(name: str) -> bool:
    """``distributed.worker.preload``: a key of Dask's configuration."""
    import dask.config

    return dask.config.get(name, default=KeyError) is not KeyError


def resolves_outside(dotted: str, rest: list[str]) -> bool:
    module, _, attr = dotted.rpartition(".") if find_spec(dotted) is None else (dotted, "", "")
    obj = importlib.import_module(module)
    return walk(obj, ([attr] if attr else []) + rest)


# ------------------------------------------------------------------------ paths


def resolves_path(path: str) -> bool:
    """A file or folder of the repository, named whole or by its last parts (``NAME``: any)."""
    path = re.sub(r"^(\.{1,3}/)+", "", path)
    if path in MADE_FILES | MADE_FOLDERS or Path(path).name in MADE_FILES:
        return True
    files, folders = repo_paths()
    parts = [
        "[^/]+" + re.escape(p[len(PLACEHOLDER) :]) if p.startswith(PLACEHOLDER) else re.escape(p)
        for p in path.rstrip("/").split("/")
    ]
    pattern = re.compile("(.*/)?" + "/".join(parts) + ("/" if path.endswith("/") else ""))
    return any(pattern.fullmatch(k) for k in (folders if path.endswith("/") else files))


# ------------------------------------------------------------------------ the scan


def references(text: str, *, python: bool = False) -> Iterator[tuple[str, str]]:
    """(kind, reference) of each name and path in ``text`` (``python``: a docstring or a
    comment, where an unquoted dotted name counts too)."""
    for match in PLAIN.finditer(text) if python else ():
        ref = match.group(1)
        first = ref.split(".")[0]
        known = first in project_modules() or first in project_classes()
        if known and not FILE_LIKE.search(ref) and ref not in REFUSED_KEYS:
            yield "name", ref
    for match in ROLE.finditer(text):
        yield "name", match.group(1)
    for match in TICKED.finditer(text):
        if not FILE_LIKE.search(match.group(1)):
            yield "name", match.group(1)
    for match in ROOTED.finditer(text):
        yield "rooted", match.group(1)
    for match in IMPORT.finditer(text):
        yield from (("rooted", f"{match.group(1)}.{n.strip()}") for n in match.group(2).split(","))
    for match in PATH.finditer(text):
        yield "path", match.group(1)
    for match in FOLDER.finditer(text):
        yield "path", match.group(1)


def unresolved(text: Text) -> list[str]:
    """What ``text`` names that does not exist, as ``file:line: reference``."""
    out = []
    for kind, ref in references(text.text, python=text.path.suffix == ".py"):
        if kind == "name":
            ok = resolves_short(ref, text.path)
        elif kind == "rooted":
            ok = resolves_rooted(ref)
        else:
            ok = resolves_path(ref)
        if not ok:
            out.append(f"{text.path.relative_to(ROOT)}:{text.line}: {ref}")
    return out


def test_every_name_and_path_of_the_code_and_the_manual_exists():
    missing = sorted({m for text in all_texts() for m in unresolved(text)})
    assert not missing, "what these name does not exist:\n" + "\n".join(missing)


# what a file of the project may say (each resolves), and the same name gone wrong
PLANTED = [
    (
        "solvers/card_guessing/exact/belief_players.py",
        "``yes_no.Evaluation``",
        "``yes_no.Evaluator``",
    ),
    ("solvers/card_guessing/exact/belief_players.py", ":class:`Player`", ":class:`players.Player`"),
    ("solvers/card_guessing/summary/rows.py", "``info.compact``", "``summary_info.compact``"),
    ("solvers/hand_guessing/__init__.py", ":mod:`.strategies`", ":mod:`.play`"),
    ("solvers/kit/task_context.py", ":func:`current`", ":func:`currently`"),
    (
        "pipeline/run.py",
        "``pipeline.storage.store.load_results``",
        "``pipeline.storage.store.load_result``",
    ),
    (
        "pipeline/run.py",
        "solvers.card_guessing.tasks:split_rows",
        "solvers.card_guessing.tasks:split_row",
    ),
    (
        "docs/architecture.md",
        "from solvers.kit import task_context",
        "from solvers import task_context",
    ),
    ("docs/usage.md", "``run.batch_seconds``", "``run.batch_second``"),
    ("docs/usage.md", "``cluster.n_workers``", "``cluster.workers``"),
    ("docs/usage.md", "``StudyPlan.left_to_run``", "``StudyPlan.left``"),
    ("docs/usage.md", "`np.memmap`", "`np.mmap`"),
    ("solvers/card_guessing/__init__.py", "tasks/yes_no_tasks.py", "tasks/yes_no.py"),
    (
        "solvers/card_guessing/__init__.py",
        "(solvers/kit/checkpoints.py)",
        "(solvers/checkpoints.py)",
    ),
    ("solvers/card_guessing/__init__.py", "see any_deck/ and", "see floating/ and"),
    ("README.md", "docs/games/card_guessing_ranks52.md", "docs/games/card_guessing_ranks.md"),
    ("README.md", "conf/study/NAME.yaml", "conf/studies/NAME.yaml"),
]


@pytest.mark.parametrize(("where", "right", "wrong"), PLANTED)
def test_a_planted_wrong_name_is_found_and_the_right_one_passes(where, right, wrong):
    path = ROOT / where
    assert unresolved(Text(path, 1, f"A text naming {right} here.")) == []
    assert unresolved(Text(path, 1, f"A text naming {wrong} here.")) != []


# what narrates the history of the work in the code, as tests/test_docs.py refuses it in the
# manual: the tracker's issues (an outside project's, dask/distributed#7105, is a source)
HISTORY = re.compile(r"\bissues? #?\d+\b|(?<![\w/&])#\d+\b|\bbefore this change\b", re.I)


def history(text: Text) -> list[str]:
    return [
        f"{text.path.relative_to(ROOT)}:{text.line}: {m.group(0)}"
        for m in HISTORY.finditer(text.text)
    ]


def test_no_docstring_or_comment_narrates_the_history_of_the_work():
    found = [
        h
        for folder in PYTHON_FOLDERS
        for p in sorted((ROOT / folder).rglob("*.py"))
        for t in python_texts(p)
        for h in history(t)
    ]
    assert not found, "\n".join(found)
    planted = Text(ROOT / "pipeline" / "run.py", 1, "The batches (issue 26, item 3) and #25.")
    assert [h.rpartition(": ")[2] for h in history(planted)] == ["issue 26", "#25"]


# what tells the story of a bug in a test's docstring, where the behaviour held belongs (the
# story is the commit message's): the tracker, before and after, what the code once did
STORY = re.compile(
    r"\bissues?\b|(?<![\w/&])#\d+\b|\bbugs?\b|\bregressions?\b|\bthe fix\b|\bwas fixed\b"
    r"|\bused to\b|\bno longer\b|\bany ?more\b|\bpreviously\b|\bformerly\b|(?<!right )\bnow\b"
    r"|(?-i:(?:^|[.;] )(?:It|This|These|They) (?:was|were|said|printed|ran|took|failed)\b)"
    r"|\b(?:it|this|these|they) (?:printed|crashed|hung|broke)\b"
    r"|\bwas (?:accepted|ignored|reported|a traceback)\b|\bended in\b"
    r"|\bonce (?:grew|stood|printed|said|was|were)\b",
    re.I,
)


def story(text: Text) -> list[str]:
    flat = " ".join(text.text.split())
    return [
        f"{text.path.relative_to(ROOT)}:{text.line}: {m.group(0)}" for m in STORY.finditer(flat)
    ]


def test_no_test_docstring_tells_the_story_of_a_bug():
    """The docstrings of tests/ (modules, tests, fixtures, helpers) state the behaviour held;
    a planted story is found and its rewrite as a behaviour passes."""
    docstrings = (
        t
        for p in sorted((ROOT / "tests").rglob("*.py"))
        for t in python_texts(p)
        if not t.text.lstrip().startswith("#")
    )
    found = [s for t in docstrings for s in story(t)]
    assert not found, "\n".join(found)
    where = ROOT / "tests" / "test_pipeline.py"
    planted = "It was ignored; a file was accepted, now refused (the fix of issue 26) #25."
    assert [s.rpartition(": ")[2] for s in story(Text(where, 1, planted))] == [
        "It was",
        "was accepted",
        "now",
        "the fix",
        "issue",
        "#25",
    ]
    held = "A full disk at the start of a run is one line naming paths.outputs, exit 2."
    assert story(Text(where, 1, held)) == []
