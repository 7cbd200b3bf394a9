"""MkDocs hook: each game page's parameter table, generated from the solver registry.

A page marks the place of a family's parameter table with ``<!-- params: FAMILY -->``, of its
strategies and description with ``<!-- strategies: FAMILY -->`` and of its result columns with
``<!-- columns: FAMILY -->``; :func:`on_page_markdown` replaces the markers
with Markdown built from :mod:`solvers` at build time, so the manual cannot drift from the code.
This module imports ``solvers`` only (never ``pipeline``).
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import sys
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402, F401  (importing it registers every family)
from solvers.registry import REQUIRED, Family, Param, get_family  # noqa: E402

MARKER = re.compile(r"<!--\s*(params|strategies|columns):\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->")


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page's Markdown with every ``params``/``strategies`` marker replaced (MkDocs hook)."""
    return expand_markers(markdown)


def expand_markers(markdown: str) -> str:
    """``markdown`` with each marker replaced by the family's table; unknown family: an error."""

    def replace(match: re.Match[str]) -> str:
        kind, name = match.groups()
        fam = get_family(name)  # a TaskError naming the valid families fails the build
        builders = {"params": params_table, "strategies": strategies_text, "columns": columns_table}
        return builders[kind](fam)

    return MARKER.sub(replace, markdown)


def params_table(fam: Family) -> str:
    """A Markdown table of ``fam``'s parameters: default, doc, check, strategies, kind, dtype."""
    head = [
        "| parameter | default | meaning | accepted values | strategies | kind | dtype |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [
        "| "
        + " | ".join(
            [
                f"`{p.name}`",
                default_text(p),
                cell(p.doc),
                cell(check_text(p)),
                strategies_of(p, fam),
                "identity" if p.identity else "execution knob (not in the task id)",
                f"`{p.dtype}`",
            ]
        )
        + " |"
        for p in fam.params
    ]
    return "\n".join(head + rows) + "\n"


def columns_table(fam: Family) -> str:
    """A Markdown table of ``fam``'s declared result columns and their dtypes."""
    rows = [f"| `{name}` | `{dtype}` |" for name, dtype in fam.columns.items()]
    return "\n".join(["| result column | dtype |", "|---|---|", *rows]) + "\n"


def strategies_text(fam: Family) -> str:
    """The family's doc string and its strategies (the default marked), as Markdown."""
    doc = plain(inspect.cleandoc(fam.doc)) if fam.doc else ""
    if fam.strategies:
        names = ", ".join(
            f"`{s}`" + (" (default)" if s == fam.default_strategy else "") for s in fam.strategies
        )
        listing = f"**Strategies** (`strategy`): {names}."
    else:
        listing = "This family has no `strategy` parameter."
    quoted = "\n".join("> " + line if line else ">" for line in doc.splitlines())
    source = f"`solvers.get_family({fam.name!r}).doc`"
    return f"{listing}\n\nThe family's own description ({source}):\n\n{quoted}\n"


def default_text(p: Param) -> str:
    """A parameter's default as table text: required, absent, or the value in code."""
    if p.default is REQUIRED:
        return "required"
    if p.default is None:
        return "absent"
    return f"`{p.default!r}`"


def strategies_of(p: Param, fam: Family) -> str:
    """Which strategies a parameter applies to, as table text."""
    if p.strategies is None:
        return "all" if fam.strategies else "-"
    return ", ".join(f"`{s}`" for s in p.strategies)


def check_text(p: Param) -> str:
    """What the parameter's checker accepts, read from the checker itself."""
    check = p.check
    cells = {k: v for k, v in closure_values(check).items() if not callable(v)}
    if getattr(check, "__qualname__", "").startswith("one_of.") and "choices" in cells:
        return "one of " + ", ".join(f"`{c}`" for c in cells["choices"])
    doc = inspect.getdoc(check)
    if doc:
        return doc.splitlines()[0].split("; the reason is raised")[0].replace("``", "`")
    source = returned_source(check)
    if source is None:
        return f"`{getattr(check, '__qualname__', repr(check))}`"
    bound = ", ".join(f"{k} = {v!r}" for k, v in sorted(cells.items()))
    return f"`{source}`" + (f" with {bound}" if bound else "")


def closure_values(func: Any) -> dict[str, Any]:
    """The names and values a closure captured (empty for a plain function)."""
    code = getattr(func, "__code__", None)
    if code is None or not func.__closure__:
        return {}
    cells = zip(code.co_freevars, func.__closure__, strict=True)
    return {name: c.cell_contents for name, c in cells}


def returned_source(func: Any) -> str | None:
    """The expression a one-line checker returns (a lambda, or ``def f(v): return ...``)."""
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    node = returned_expressions(code.co_filename).get((code.co_firstlineno, code.co_name))
    if node is None:
        return None
    return ast.unparse(Constants(func.__globals__).visit(copy.deepcopy(node)))


class Constants(ast.NodeTransformer):
    """Replaces module constants (UPPER_CASE numbers) by their values, e.g. ``MAX_N`` -> 2000."""

    def __init__(self, namespace: dict[str, Any]):
        self.namespace = namespace

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.namespace.get(node.id)
        if node.id.isupper() and isinstance(value, int | float) and not isinstance(value, bool):
            return ast.copy_location(ast.Constant(value), node)
        return node


@cache
def returned_expressions(filename: str) -> dict[tuple[int, str], ast.expr]:
    """(first line, name) -> the returned expression, for one-expression functions."""
    try:
        tree = ast.parse(Path(filename).read_text())
    except (OSError, SyntaxError):
        return {}
    found: dict[tuple[int, str], list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            found.setdefault((node.lineno, "<lambda>"), []).append(node.body)
        elif isinstance(node, ast.FunctionDef):
            body = node.body
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                found.setdefault((first, node.name), []).append(body[0].value)
    return {key: nodes[0] for key, nodes in found.items() if len(nodes) == 1}


def plain(text: str) -> str:
    """reStructuredText inline code (two backticks) and roles (``:mod:`` before a name in
    backticks) as Markdown code spans."""
    return re.sub(r":[a-z]+:`", "`", text.replace("``", "`"))


def cell(text: str) -> str:
    """``text`` fit for one Markdown table cell (one line, pipes escaped)."""
    return " ".join(textwrap.dedent(text).split()).replace("|", "\\|") or "-"
