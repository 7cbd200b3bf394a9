"""The shape of the code: imports point one way, with no cycle; the pipeline names no game;
``cluster=sync`` never loads Dask's distributed; the wheel's package list is complete; the
run path is short and only the backends know the cluster kinds; no function of the solvers is
longer than 80 lines or branches more than 20 ways, unless it is a compiled kernel marked as
kept whole."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers.commands import python_output
from tests.helpers.repository import ROOT

PACKAGES = ("pipeline", "solvers", "hydra_plugins")


def module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, object]:
    """Every module of the project's packages: name -> path."""
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports_of(path, name: str, known: set[str]) -> set[str]:
    """The project modules that ``path`` imports anywhere (module level or in a function)."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                root = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*root, base] if base else root)
            for alias in node.names:  # "from X import Y": the module X.Y if it is one, else X
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in out if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, name, set(mods)) for name, path in mods.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of nodes, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    assert len(graph) > 40
    assert find_cycle(graph) is None


# the rooms of pipeline/ (docs/architecture.md): a package, or a module directly in it
MOST_ROOMS, MOST_ARROWS = 35, 100
# each room imports only what stands below it; higher rooms first, a room of one line
# holding rooms that import none of each other
ROOM_ORDER = [
    {"command"},
    {"__main__", "study", "reproduce", "describe", "index"},
    {"cli", "search"},
    {"run"},
    {"readback"},
    {"outputs"},
    {"running"},
    {"backends"},
    {"config", "certs", "long_task_setup"},
    {"config_files", "storage"},
    {"errors", "ctrl_c", "heap", "exception_chain", "multirun_jobs"},
]


def room_graph() -> dict[str, set[str]]:
    """pipeline/ drawn as rooms: room -> the rooms it imports (pipeline/__init__.py, which
    only hands names on, is no room)."""
    rooms: dict[str, set[str]] = {}
    for name, deps in import_graph().items():
        parts = name.split(".")
        if parts[0] != "pipeline" or len(parts) < 2 or parts[1] == "conf":
            continue
        room = rooms.setdefault(parts[1], set())
        room |= {d.split(".")[1] for d in deps if d.startswith("pipeline.") and d != "pipeline"}
    return {room: deps - {room} for room, deps in rooms.items()}


def test_the_pipeline_is_few_rooms_and_arrows_without_a_circle():
    rooms = room_graph()
    arrows = sum(len(deps) for deps in rooms.values())
    assert len(rooms) <= MOST_ROOMS and arrows <= MOST_ARROWS, (len(rooms), arrows)
    assert find_cycle(rooms) is None


def test_each_room_of_the_pipeline_imports_only_rooms_below_it():
    """Every room stands on a line of ROOM_ORDER, and imports rooms of lower lines only."""
    rooms = room_graph()
    line = {room: n for n, held in enumerate(ROOM_ORDER) for room in held}
    assert set(rooms) == set(line), set(rooms) ^ set(line)
    up = sorted((a, b) for a, deps in rooms.items() for b in deps if line[b] <= line[a])
    assert up == []


def test_solvers_never_import_the_pipeline():
    graph = import_graph()
    for name, deps in graph.items():
        if name.startswith("solvers"):
            assert not {d for d in deps if d.startswith("pipeline")}, name


def test_the_pipeline_names_no_game():
    from solvers import families

    names = re.compile("|".join(families()))
    for path in (ROOT / "pipeline").rglob("*.py"):
        assert not names.search(path.read_text()), path


SYNC_RUN = """
import sys, tempfile
from tests.helpers.runs import compose_config
from pipeline.run import run_study
with tempfile.TemporaryDirectory() as out:
    cfg = compose_config(f"paths.outputs={out}", "cluster=sync", "run.progress=false")
    report = run_study(cfg, log=lambda *_: None)
print(report.computed, "distributed" in sys.modules, "numba" in sys.modules)
"""


def test_a_sync_study_loads_neither_distributed_nor_numba():
    """The default study on cluster=sync loads neither Dask's distributed nor Numba (its
    exact solver compiles nothing; families keep their kernels in modules of their own,
    imported where a task that uses them runs)."""
    assert python_output(SYNC_RUN) == "2 False False"


def test_the_command_s_modules_import_no_compiler():
    """Importing the command and every family (to read their parameters) imports no Numba:
    the start-up of `python -m pipeline` does not pay for it."""
    code = "import sys, pipeline.__main__, solvers; print('numba' in sys.modules)"
    assert python_output(code) == "False"


def test_the_wheel_lists_every_package():
    """pyproject lists the packages (it maps conf/ to pipeline.conf): none may be missing."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        module_name(p.parent / "__init__.py")
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("__init__.py")
    }
    found.discard("hydra_plugins")  # a namespace package: no __init__.py of its own
    # folders of data only (configs, report assets), declared so setuptools installs them
    data = {"pipeline.assets"} | {
        f"pipeline.conf.{d.name}" for d in (ROOT / "conf").iterdir() if d.is_dir()
    }
    data = {d for d in data if not d.endswith("__pycache__")}
    assert listed == found | {"pipeline.conf"} | data


# solvers/card_guessing/ by role (docs/architecture.md): each sub-package and top-level module
RULES = ("exact", "brute_force")  # the game's rules, its strategies, their exact values
ENGINES = ("any_deck", "uniform_deck", "info_policy")  # the float engines, one per question
SHARED = ("state_codes", "first_moves")  # what the engines share
MACHINERY = ("tasks", "summary", "simulation", "report", "play", "play_players", "play_screen")
DECLARED = ("rules", "scheduling")  # the family's Rules and Scheduling (solvers/family.py)
ROW_READERS = ("summary", "report")  # read stored rows into tables and figures
MAX_LINES = 600  # no file of the family longer


def card_guessing_modules() -> dict[str, object]:
    """Every module of solvers/card_guessing: name -> path."""
    return {n: p for n, p in modules().items() if n.startswith("solvers.card_guessing.")}


def role(name: str) -> str:
    """The sub-package or top-level module of solvers/card_guessing that ``name`` is in."""
    return name.removeprefix("solvers.card_guessing.").split(".")[0]


def top_imports(path) -> set[str]:
    """The top-level names of every module ``path`` imports (``numpy`` for ``numpy.linalg``)."""
    tree = ast.parse(path.read_text())
    tops = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    tops |= {
        (n.module or "").split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and not n.level
    }
    return tops


def test_every_part_of_card_guessing_has_a_role():
    """A new sub-package or module is placed among the roles, so the rules below cover it."""
    found = {role(name) for name in card_guessing_modules()}
    assert found == {*RULES, *ENGINES, *SHARED, *MACHINERY, *DECLARED}


def test_card_guessing_rules_and_strategies_stay_apart_from_the_machinery():
    """exact/ and brute_force/ import no Dask, pandas or pipeline, and nothing of
    the family's engines, tasks/, summary/, simulation/, report or play (the architecture
    page's rule)."""
    mods = modules()
    for name, path in card_guessing_modules().items():
        if role(name) not in RULES:
            continue
        assert not top_imports(path) & {"dask", "distributed", "pandas", "pipeline"}, name
        for dep in imports_of(path, name, set(mods)):
            assert role(dep) not in (*ENGINES, *MACHINERY), (name, dep)


def test_card_guessing_engines_compute_and_import_no_machinery():
    """The engines and what they share import nothing of tasks/, summary/, simulation/, report
    or play, no pandas and no pipeline; an engine imports no other engine, and the shared
    modules no engine."""
    mods = modules()
    for name, path in card_guessing_modules().items():
        if role(name) not in (*ENGINES, *SHARED):
            continue
        assert not top_imports(path) & {"pandas", "pipeline"}, name
        for dep in imports_of(path, name, set(mods)):
            if not dep.startswith("solvers.card_guessing."):
                continue
            assert role(dep) not in MACHINERY, (name, dep)
            if role(name) in SHARED or role(dep) in ENGINES:
                assert role(dep) == role(name), (name, dep)


def row_builders(path, name: str, columns: set[str]) -> list[str]:
    """Where the module at ``path`` turns something into a row: a public function named
    ``*_row(s)`` or one returning ``Row``, or a dict (literal or ``dict(...)``) keyed by the
    family's result columns; the family's ``columns=`` declaration is not a row."""
    tree = ast.parse(path.read_text())
    declared = {
        id(n.value) for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == "columns"
    }
    found = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.FunctionDef):
            returns = ast.unparse(node.returns) if node.returns else ""
            public_rows = not node.name.startswith("_") and re.search(r"(^|_)rows?$", node.name)
            if public_rows or re.search(r"\bRow\b", returns):
                found.append(f"{where} def {node.name}")
        elif isinstance(node, ast.Dict) and id(node) not in declared:
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if keys & columns:
                found.append(f"{where} dict of {sorted(keys & columns)}")
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "dict"
            and {k.arg for k in node.keywords} & columns
        ):
            found.append(f"{where} dict(...) of result columns")
    return found


def returns_rows(func: ast.FunctionDef) -> bool:
    return bool(func.returns and re.search(r"\bRow\b", ast.unparse(func.returns)))


def result_columns() -> set[str]:
    from solvers import get_family

    columns = set(get_family("card_guessing").solver.columns)
    assert {"expected_score", "score_pmf", "first_moves", "bound_upper"} <= columns
    return columns


def test_only_tasks_turn_a_task_into_a_row():
    """No module of the family outside tasks/ (but summary/ and report.py, which read stored
    rows into tables and figures) names a public function after rows, returns a Row or
    fills the family's result columns."""
    columns = result_columns()
    found = []
    for name, path in card_guessing_modules().items():
        if role(name) not in ("tasks", *ROW_READERS):
            found += row_builders(path, name, columns)
    assert found == []


def test_the_family_hands_every_task_to_tasks():
    """The family's solver (solvers/card_guessing/tasks/__init__.py) fills no result column,
    and its run and split_rows return what a module of tasks/ returns."""
    family = ROOT / "solvers" / "card_guessing" / "tasks" / "__init__.py"
    assert not [d for d in row_builders(family, "family", result_columns()) if " def " not in d]
    tree = ast.parse(family.read_text())
    tasks = {
        a.asname or a.name
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.module == "solvers.card_guessing.tasks"
        for a in n.names
    }
    handed = [n for n in tree.body if isinstance(n, ast.FunctionDef) and returns_rows(n)]
    assert {f.name for f in handed} == {"run", "split_rows"}
    for func in handed:
        for ret in (n for n in ast.walk(func) if isinstance(n, ast.Return)):
            call = ret.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute), func.name
            assert ast.unparse(call.func.value) in tasks, (func.name, ast.unparse(call))


def test_no_file_of_card_guessing_is_over_its_size():
    """Split by what each part answers: no file of the family over MAX_LINES lines."""
    long = {
        name: n
        for name, path in card_guessing_modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


# ----------------------------------------------------------------- every family, by role

BUILT_IN = ("card_guessing", "hand_guessing", "high_low", "mastermind", "no_repeat", "triples")
# the module of a family's package that declares each part (solvers/family.py), as
# (attribute of Family, module, name); the scheduling part only where the family has one
PARTS = (("rules", "rules", "RULES"), ("solver", "tasks", "SOLVER"))


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_family_registers_the_parts_its_modules_declare(name):
    """A family's rules are its rules.py's RULES, its solver its tasks' SOLVER and its
    scheduling its scheduling.py's SCHEDULING (or none, where the family has no such module);
    its presentation names functions of its summary and report modules."""
    import importlib

    from solvers import get_family
    from solvers.family import Scheduling

    fam = get_family(name)
    for attr, module, declared in PARTS:
        part = getattr(importlib.import_module(f"solvers.{name}.{module}"), declared)
        assert getattr(fam, attr) is part, (name, attr)
    if (ROOT / "solvers" / name / "scheduling.py").exists():
        scheduling = importlib.import_module(f"solvers.{name}.scheduling").SCHEDULING
        assert fam.scheduling is scheduling
    else:
        assert fam.scheduling == Scheduling()
    for ref in (fam.presentation.summary, fam.presentation.report):
        assert ref is None or re.fullmatch(rf"solvers\.{name}\.(summary|report):\w+", ref), ref


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_family_s_init_only_registers_it(name):
    """solvers/<family>/__init__.py holds the family's description, its version and its
    registration: no function or class of its own (those live in the module of their part)."""
    tree = ast.parse((ROOT / "solvers" / name / "__init__.py").read_text())
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert defined == [], (name, defined)
    assert ast.get_docstring(tree), name


# ----------------------------------------------------------------- the run path


def defined_classes(path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)}


def test_run_py_is_the_story_of_a_run():
    """run.py holds a run of a study (the StudyRun and its StudyReport, prepared once) and
    the stages it is handed to, and stays short; the batches are cut and stored in
    pipeline/running/driver.py, run in pipeline/running/worker.py."""
    run = ROOT / "pipeline" / "run.py"
    assert len(run.read_text().splitlines()) < 320
    assert defined_classes(run) == {"StudyRun", "StudyReport"}
    assert {"BatchCutter"} <= defined_classes(ROOT / "pipeline" / "running" / "driver.py")
    assert {"TaskSlice", "DoneBatch"} <= defined_classes(
        ROOT / "pipeline" / "running" / "worker.py"
    )


def test_only_the_backends_know_the_cluster_kinds():
    """Outside pipeline/backends/ no code of the pipeline branches on a kind; each backend
    answers what it knows through the same calls."""
    for path in [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "pipeline").rglob("*.js")]:
        if "backends" not in path.relative_to(ROOT / "pipeline").parts:
            assert "kind ==" not in path.read_text(), path
    from pipeline.backends import Backend
    from pipeline.config import cluster_backends as backends

    assert list(backends()) == ["sync", "local", "address", "slurm"]
    for kind, backend in backends().items():
        assert issubclass(backend, Backend) and backend.kind == kind, kind
        defined = set(vars(backend))
        assert {"check", "find_workers", "executor"} <= defined, kind


def test_every_backend_is_one_class_over_the_declared_base():
    """Each cluster kind's backend is a class over :class:`pipeline.backends.Backend` with its
    settings model beside it, in its own module of pipeline/backends/, and the caller's own
    client's backend is one more over the same base; a run holds its backend as the base."""
    import typing

    from pipeline.backends import Backend
    from pipeline.backends.given_client import ClientBackend
    from pipeline.config import ClusterSettings
    from pipeline.config import cluster_backends as backends
    from pipeline.run import StudyRun

    modules = set()
    for kind, backend in backends().items():
        model = backend.settings_model
        assert issubclass(model, ClusterSettings) and model.__module__ == backend.__module__
        assert backend.__module__.startswith("pipeline.backends."), kind
        modules.add(backend.__module__)
    assert len(modules) == len(backends())
    assert issubclass(ClientBackend, Backend) and ClientBackend.kind is None
    assert typing.get_type_hints(StudyRun)["backend"] is Backend


def cluster_questions(source: str, kinds: tuple[str, ...]) -> list[str]:
    """Where ``source`` asks which cluster runs, by line: an attribute ``.client`` read (an
    executor's Dask client), or a comparison with a ``.kind`` or a cluster kind's name."""

    def names_a_kind(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute):  # a NumPy dtype's kind names no cluster
            numpy = isinstance(node.value, ast.Attribute) and node.value.attr == "dtype"
            return node.attr == "kind" and not numpy
        return isinstance(node, ast.Constant) and node.value in kinds

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "client":
            found.append((node.lineno, ".client"))
        elif isinstance(node, ast.Compare):
            if any(names_a_kind(n) for n in (node.left, *node.comparators)):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Match) and names_a_kind(node.subject):
            found.append((node.lineno, f"match {ast.unparse(node.subject)}"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_cluster_questions_are_found():
    kinds = ("sync", "local")
    source = (
        "if executor.client is None:\n    pass\n"
        "x = cluster.kind == 'sync'\n"
        "y = 'local' in (a, b)\n"
        "z = executor.description\n"
        "match conf.kind:\n    case _:\n        pass\n"
        "w = column.dtype.kind == 'f'\n"
    )
    assert cluster_questions(source, kinds) == [
        "1: .client",
        "3: cluster.kind == 'sync'",
        "4: 'local' in (a, b)",
        "6: match conf.kind",
    ]


def test_only_the_backends_ask_which_cluster_runs():
    """Outside pipeline/backends/, no module of the pipeline, the dask launcher or the
    solvers reads a ``.client`` or compares a cluster kind: the pipeline asks its executor
    (submit, completed, worker_events), a task its context (``TaskContext.spread``), and the
    executor's backend answers."""
    from pipeline.config import cluster_models

    paths = [
        *(ROOT / "pipeline").rglob("*.py"),
        *(ROOT / "hydra_plugins").rglob("*.py"),
        *(ROOT / "solvers").rglob("*.py"),
    ]
    backends = ROOT / "pipeline" / "backends"
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in paths
        if not path.is_relative_to(backends)
        for where in cluster_questions(path.read_text(), tuple(cluster_models()))
    ]
    assert found == []


# what starts a Dask cluster or reaches one: a task that spreads asks its context instead
CLUSTER_NAMES = {
    "Client", "LocalCluster", "SpecCluster", "SSHCluster", "Nanny", "Scheduler", "Worker",
    "get_client", "worker_client", "get_worker", "secede", "rejoin",
}  # fmt: skip
DASK_CLUSTER_MODULES = ("distributed", "dask.distributed", "dask_jobqueue")


def cluster_reaches(source: str) -> list[str]:
    """Where ``source`` imports Dask's ``distributed`` (or ``dask.distributed``,
    ``dask_jobqueue``) or names what starts or reaches a cluster (:data:`CLUSTER_NAMES`), by
    line."""

    def dask_module(name: str) -> bool:
        return any(name == m or name.startswith(f"{m}.") for m in DASK_CLUSTER_MODULES)

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if dask_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            module = node.module or ""
            if dask_module(module) or (module == "dask" and "distributed" in names):
                found.append((node.lineno, f"from {module} import {', '.join(names)}"))
        elif isinstance(node, ast.Name) and node.id in CLUSTER_NAMES:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in CLUSTER_NAMES:
            found.append((node.lineno, f".{node.attr}"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_cluster_reaches_are_found():
    source = (
        "import distributed\n"
        "from dask.distributed import Client\n"
        "from dask import distributed, delayed\n"
        "with LocalCluster() as lc:\n    pass\n"
        "c = distributed.get_client()\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "import dask.array\n"
    )
    assert cluster_reaches(source) == [
        "1: import distributed",
        "2: from dask.distributed import Client",
        "3: from dask import distributed, delayed",
        "4: LocalCluster",
        "6: .get_client",
    ]


def test_solvers_never_start_or_reach_a_cluster():
    """No module of the solvers imports Dask's distributed (nor dask.distributed,
    dask_jobqueue) or names what starts a cluster or reaches one (LocalCluster, Client,
    get_client, worker_client, secede...): a task that spreads its work asks its context
    for a way to spread (``TaskContext.spread``) and the pipeline decides where the pieces
    run, with the run's own security."""
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in (ROOT / "solvers").rglob("*.py")
        for where in cluster_reaches(path.read_text())
    ]
    assert found == []


def test_no_module_imports_another_s_private_names():
    """The pipeline and the solvers' shared modules (solvers/*.py, solvers/kit/) import public
    names only (a helper two modules need has a public name)."""
    shared = [*(ROOT / "solvers").glob("*.py"), *(ROOT / "solvers" / "kit").glob("*.py")]
    paths = [*(ROOT / "pipeline").rglob("*.py"), *shared]
    for path in [*paths, *(ROOT / "hydra_plugins").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (path, node.module, private)


ERRORS = {"StudyError", "UnsafePath", "StoreError", "BadInput", "Unreadable"}


def test_the_errors_are_imported_from_where_they_are_defined():
    """StudyError and its kin are defined in pipeline/errors.py and imported from there."""
    for path in [p for pkg in (*PACKAGES, "tests") for p in (ROOT / pkg).rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and ERRORS & {a.name for a in node.names}:
                assert node.module == "pipeline.errors", path


# ------------------------------------------------------------------ the size of functions

LONGEST = 80  # lines of a function, from its def to its last line
MOST_BRANCHES = 20  # McCabe complexity, as ruff's C901 counts it
COMPILED = {"njit", "jit", "kernel", "parallel_kernel"}  # the Numba decorators of solvers/
KERNEL_MARK = "# kernel kept whole:"  # the line above a compiled kernel whose speed needs its shape


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def function_sizes(source: str) -> list[tuple[str, int, int, bool]]:
    """(name, line of its def, its number of lines, whether it is a marked kernel) of every
    function in ``source``, nested ones included; a marked kernel is a compiled function
    whose first decorator has the line ``KERNEL_MARK ...`` right above it."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        compiled = any(_decorator_name(d) in COMPILED for d in node.decorator_list)
        marked = compiled and first >= 2 and lines[first - 2].strip().startswith(KERNEL_MARK)
        out.append((node.name, node.lineno, node.end_lineno - node.lineno + 1, marked))
    return out


def product_files() -> list:
    """The files whose functions the size rules hold: every module of the product (solvers/,
    pipeline/, hydra_plugins/)."""
    return sorted(
        p for pkg in ("solvers", "pipeline", "hydra_plugins") for p in (ROOT / pkg).rglob("*.py")
    )


def test_function_sizes_see_kernel_marks_only_on_compiled_functions():
    source = (
        "@njit(cache=True)\ndef a():\n    pass\n\n"
        f"{KERNEL_MARK} one pass over the states\n@kernel\ndef b():\n    pass\n\n"
        f"{KERNEL_MARK} not compiled\n@cache\ndef c():\n    def d():\n        pass\n"
    )
    sizes = {name: (line, n, marked) for name, line, n, marked in function_sizes(source)}
    assert sizes == {
        "a": (2, 2, False),
        "b": (7, 2, True),
        "c": (12, 3, False),
        "d": (13, 2, False),
    }


def test_no_product_function_is_longer_than_80_lines_unless_a_marked_kernel():
    files = product_files()
    assert {"optimal.py", "run.py", "values.py"} <= {p.name for p in files}
    long = [
        f"{p.relative_to(ROOT)}:{line} {name} ({n} lines)"
        for p in files
        for name, line, n, marked in function_sizes(p.read_text())
        if n > LONGEST and not marked
    ]
    assert not long, "split these into functions named for what they return:\n" + "\n".join(long)


def test_no_product_function_branches_more_than_20_ways_unless_a_marked_kernel():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    files = product_files()
    res = subprocess.run(
        [
            ruff,
            "check",
            "--isolated",
            "--ignore-noqa",
            "--select",
            "C901",
            "--output-format",
            "json",
        ]
        + ["--config", f"lint.mccabe.max-complexity={MOST_BRANCHES}", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode in (0, 1), res.stderr
    marked = {(str(p), line) for p in files for _, line, _, m in function_sizes(p.read_text()) if m}
    complex_ = [
        f"{Path(f['filename']).relative_to(ROOT)}:{f['location']['row']} {f['message']}"
        for f in json.loads(res.stdout)
        if (f["filename"], f["location"]["row"]) not in marked
    ]
    assert not complex_, "\n".join(complex_)
