"""The manual's reference pages follow the code: the settings reference lists every key of
the typed config and of conf/ (docs/settings_table.py), the API reference shows each named
object's docstring (mkdocstrings, docs/griffe_roles.py), the gallery every shipped study's
command and figure (docs/gallery.py), and the tutorial's steps lead each to the next.  The
site is the session's ``built_site`` (tests/conftest.py)."""

from __future__ import annotations

import html
import importlib.util
import inspect
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
CONF = ROOT / "conf"
TUTORIAL = sorted((DOCS / "tutorial").glob("0*.md"))


def docs_module(name: str) -> ModuleType:
    """docs/NAME.py, imported from its file as MkDocs imports a hook."""
    spec = importlib.util.spec_from_file_location(f"guesslab_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass finds its module by name
    spec.loader.exec_module(module)
    return module


def page_text(page: Path) -> str:
    """A built page's article as plain text: tags dropped, entities read, spaces collapsed."""
    text = page.read_text(encoding="utf-8")
    article = text[text.index("<article") : text.index("</article>")]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", article)).split())


def section_of(page_html: str, heading_id: str) -> str:
    """The HTML of a page from the heading ``heading_id`` to the next heading of its level."""
    start = page_html.index(f'id="{heading_id}"')
    following = re.search(r"<h2 ", page_html[start:])
    return page_html[start : start + following.start()] if following else page_html[start:]


def flat_keys(mapping: dict, prefix: str) -> set[str]:
    """The dotted keys of a YAML mapping's leaves (a mapping's keys, not the mapping)."""
    keys = set()
    for key, value in mapping.items():
        dotted = f"{prefix}.{key}"
        keys |= flat_keys(value, dotted) if isinstance(value, dict) else {dotted}
    return keys


def model_keys(model, prefix: str) -> set[str]:
    """The dotted keys of a pydantic config model, nested models flattened."""
    from pydantic import BaseModel

    keys = set()
    for name, field in model.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            keys |= model_keys(nested, f"{prefix}.{name}")
        else:
            keys.add(f"{prefix}.{name}")
    return keys


def listed_keys(section_html: str) -> set[str]:
    """The keys a settings table lists: the code span opening each row."""
    cells = re.findall(r"<tr>\s*<td><code>(.+?)</code></td>", section_html)
    return {re.sub(r"<[^>]+>", "", cell) for cell in cells}  # <wbr>: where a name may break


def test_the_settings_reference_lists_every_key_of_conf_and_of_the_config_models(built_site):
    """Every key that conf/ sets (config.yaml's stage, store and run, paths/default.yaml,
    each cluster/KIND.yaml) and every key of pipeline.config's models has its row, each
    cluster kind's in its own section."""
    from pipeline import config

    page = (built_site / "settings.html").read_text(encoding="utf-8")
    main = yaml.safe_load((CONF / "config.yaml").read_text())
    paths = yaml.safe_load((CONF / "paths" / "default.yaml").read_text())
    expected = {"stage"} | flat_keys(main["store"], "store") | flat_keys(main["run"], "run")
    expected |= flat_keys(paths, "paths")
    expected |= model_keys(config.StoreConfig, "store") | model_keys(config.RunConfig, "run")
    expected |= model_keys(config.PathsConfig, "paths")
    before_clusters = page[: page.index('id="clustersync"')]
    assert listed_keys(before_clusters) == expected
    for kind, model in config.cluster_models().items():
        conf = yaml.safe_load((CONF / "cluster" / f"{kind}.yaml").read_text())
        keys = flat_keys(conf, "cluster") | model_keys(model, "cluster")
        assert listed_keys(section_of(page, f"cluster{kind}")) == keys, kind


def test_the_settings_reference_gives_each_key_its_check_default_and_comment():
    """A row holds the words the key's check refuses a value with, conf/'s default and the
    comment beside the key in conf/."""
    table = docs_module("settings_table").settings_markdown()
    rows = {line.split("|")[1].strip(" `"): line for line in table.splitlines() if "| `" in line}
    assert (
        "| a positive number of seconds | `1.0` | auto batching aims at this much"
        in rows["run.batch_seconds"]
    )
    assert "one of auto, fork, spawn, forkserver | `auto` |" in rows["cluster.start_method"]
    assert "| a positive number of seconds, or null | `null` |" in rows["run.task_timeout_s"]
    assert "| none | required: cluster.address=" in rows["cluster.address"]
    # a comment that goes on over the lines under its key is read whole
    assert "or its family gives no estimate) |" in rows["cluster.start_after_s"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("config.yaml", "  max_batch: 10000  # auto", "  max_batch: 10000"), "run.max_batch: no"),
        (
            ("config.yaml", "  max_batch: 10000  # auto", "  # max_batch: 10000"),
            "run.max_batch has",
        ),
        (("cluster/sync.yaml", "kind: sync", "kind: sync\nspeed: 2  # fast"), "cluster.speed"),
    ],
    ids=["a key without its comment", "a key conf/ leaves out", "a key the model refuses"],
)
def test_the_settings_reference_refuses_conf_that_disagrees_with_the_models(
    tmp_path, monkeypatch, edit, message
):
    """The build fails, naming the key, where conf/ and the models disagree or a key has no
    comment: the reference cannot leave a key out or say nothing of it."""
    module = docs_module("settings_table")
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    name, old, new = edit
    path = conf / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    monkeypatch.setattr(module, "CONF", conf)
    with pytest.raises(module.SettingsError, match=re.escape(message)):
        module.settings_markdown()


def api_objects():
    """The objects the API reference documents, as a user imports them."""
    import solvers
    from pipeline import Study
    from pipeline.store import load_results

    return {
        "Study": Study,
        "load_results": load_results,
        "solve": solvers.solve,
        "get_family": solvers.get_family,
        "register": solvers.register,
        "Family": solvers.Family,
        "Rules": solvers.Rules,
        "Solver": solvers.Solver,
        "Scheduling": solvers.Scheduling,
        "Presentation": solvers.Presentation,
    }


def first_line_shown(obj) -> str:
    """An object's docstring's first line as the reference shows it: Sphinx roles and
    literals as code, whose backquotes the page's text does not show."""
    roles = docs_module("griffe_roles")
    line = inspect.getdoc(obj).splitlines()[0]
    return " ".join(roles.markdown_of(line).replace("`", "").split())


@pytest.mark.parametrize("name", sorted(api_objects()))
def test_the_api_reference_shows_each_object_s_docstring(built_site, name):
    text = page_text(built_site / "api.html")
    obj = api_objects()[name]
    assert "".join(first_line_shown(obj).split()) in "".join(text.split()), name
    assert f"{obj.__module__}.{obj.__name__}" in text  # its heading: the full path


def field_comment(name: str) -> str:
    """The comment lines above the field ``name`` of a class of solvers/family.py (Family and
    its parts), or beside it."""
    lines = (ROOT / "solvers" / "family.py").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"    {name}: ", line))
    above = []
    while lines[at - 1].strip().startswith("#"):
        at -= 1
        above.insert(0, lines[at].strip().removeprefix("#").strip())
    beside = lines[at + len(above)].partition("#")[2].strip()
    text = " ".join([*above, beside]).strip()
    assert text, f"Family.{name} has no comment"
    return text


def test_the_api_reference_shows_no_sphinx_role_and_the_fields_comments(built_site):
    """Roles read as code, not as ``:func:`` text; a dataclass field's comment is its
    description."""
    text = page_text(built_site / "api.html")
    assert not re.search(r":(func|class|meth|mod|attr):", text)
    assert " ".join(field_comment("version").split()) in text  # the lines above it
    assert " ".join(field_comment("columns").split()) in text  # the comment at its end
    roles = docs_module("griffe_roles")
    assert roles.markdown_of(":func:`~a.b.solve` or :class:`Family`") == "`solve` or `Family`"


def test_the_gallery_gives_every_shipped_study_its_command_and_figure(built_site):
    """Each study of conf/study/ has its section with the command that runs it; each study
    that draws a figure of the manual shows it."""
    page = (built_site / "gallery.html").read_text(encoding="utf-8")
    figures = docs_module("gallery").manual_figures().FIGURES
    for path in sorted((CONF / "study").glob("*.yaml")):
        name = path.stem
        start = page.index(f'id="{name}"')
        end = page.find("<h3 ", start + 1)
        entry = page[start : end if end > 0 else None]
        assert f"python -m pipeline study={name}" in html.unescape(re.sub(r"<[^>]+>", "", entry))
        drawn = [f.name for f in figures if f.study == name]
        if drawn:
            assert f'src="img/{drawn[0]}.png"' in entry, name


def test_the_gallery_shows_each_result_in_the_entry_of_the_study_that_computes_it(built_site):
    """Each result of docs/data/results.yaml is in the gallery entry of the study its
    command runs."""
    page = (built_site / "gallery.html").read_text(encoding="utf-8")
    results = yaml.safe_load((DOCS / "data" / "results.yaml").read_text())
    assert results
    for key, r in results.items():
        study = re.search(r"\bstudy=(\w+)", r["command"]).group(1)
        start = page.index(f'id="{study}"')
        end = page.find("<h3 ", start + 1)
        entry = html.unescape(re.sub(r"<[^>]+>", "", page[start : end if end > 0 else None]))
        assert r["title"] in entry, (key, study)


def test_each_tutorial_step_links_to_the_next(built_site):
    """The tutorial's start lists every step; each step ends with a link to the next; the
    last leads back to the start."""
    names = [p.stem for p in TUTORIAL]
    assert names == [
        "01-install",
        "02-first-study",
        "03-own-study",
        "04-sweep",
        "05-own-strategy",
        "06-notebook",
        "07-cluster",
    ]
    start = (built_site / "tutorial" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{name}.html"' in start for name in names)
    for step, following in zip(names, [*names[1:], "index"], strict=True):
        text = (DOCS / "tutorial" / f"{step}.md").read_text(encoding="utf-8")
        last = text.strip().splitlines()[-1]
        assert re.fullmatch(rf"\*\*(Next|Back to):\*\* \[[^\]]+\]\({following}\.md\)", last), step
        built = (built_site / "tutorial" / f"{step}.html").read_text(encoding="utf-8")
        assert f'href="{following}.html"' in built, step


def test_the_home_page_leads_to_the_tutorial(built_site):
    assert 'href="tutorial/index.html"' in (built_site / "index.html").read_text(encoding="utf-8")


# what the build fills in on a page: quotes of docs/data, the hooks' markers, mkdocstrings
FILLED_IN = ["{{ ", "<!-- params:", "<!-- strategies:", "<!-- columns:", "<!-- settings",
             "<!-- gallery", "<!-- results", "<!-- notebook:", "::: "]  # fmt: skip


def test_the_readme_holds_nothing_the_manual_s_build_fills_in():
    """The README is read as it is (on a code host, in a package index): no template."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not [mark for mark in FILLED_IN if mark in text]


def test_the_manual_s_sources_say_what_the_build_fills_in_and_where_the_pages_are():
    """docs/README.md, which a code host shows beside the sources, names each kind of
    template the pages hold and how to build and open the manual; it is not a page."""
    text = (DOCS / "README.md").read_text(encoding="utf-8")
    assert all(mark.strip() in text for mark in FILLED_IN)
    assert "mkdocs build --strict" in text and "site/index.html" in text
    used = {m for page in DOCS.rglob("*.md") for m in FILLED_IN if m in page.read_text()}
    assert set(FILLED_IN) <= used | {"::: "}


def test_a_console_block_s_copy_button_copies_the_command_alone(built_site, driver):
    """Material copies a code block's text as shown while it carries data-md-copying
    (bundle.js): in a console block the prompt and the output are hidden then
    (docs/stylesheets/extra.css), so the copy is the command a reader runs."""
    driver.get((built_site / "tutorial" / "02-first-study.html").as_uri())
    copied = driver.execute_script(
        """const code = document.querySelector(".highlight code");
        code.setAttribute("data-md-copying", "");
        const text = code.innerText;
        code.removeAttribute("data-md-copying");
        return [text.trimEnd(), code.innerText.trimEnd()];"""
    )
    assert copied[0] == "python -m pipeline"
    assert copied[1].startswith("$ python -m pipeline") and "study paper: 2 tasks" in copied[1]


def test_the_api_reference_fetches_no_inventory_when_the_manual_is_built():
    """mkdocstrings links to another site's objects only through inventories it downloads at
    build time: the manual lists none, so it builds offline."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    plugins = text[text.index("\nplugins:") : text.index("\nextra:")]
    assert "mkdocstrings" in plugins
    assert not re.search(r"\b(inventories|import):", plugins)
