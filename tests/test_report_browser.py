"""The HTML report and the index in a real browser: headless Chromium driven by Selenium.

The module fixture runs scripts/browser_setup.sh when chromium or chromedriver is missing
(apt-get install chromium chromium-driver); the tests skip only where that cannot run (not
root, no apt-get), and say so.  The pages are opened from disk (file://), as a reader would.
Screenshots go to $GUESSLAB_SCREENSHOTS (default: the run's temporary folder, screenshots0;
``pytest -s`` prints each path); look at them once before a change to the report lands.

Expected values: Gural, Simper & So (2019), *Information Theory in a Card-Guessing Game*
(greedy 475/112 and the optimum 2383/560 on the (3,3,3) deck); Norvig (2020), *Flipping
Cards: A Guessing Game* (5/6 for three distinct cards).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT
from tests_support import compose_config

from pipeline import store
from pipeline.index import write_index
from pipeline.run import run_study
from pipeline.summary import write_summary
from solvers.registry import solve

pytestmark = pytest.mark.slow

SETUP = ROOT / "scripts" / "browser_setup.sh"
CANNOT_RUN = 3  # the script's exit status when this machine cannot install the browser
WAIT_S = 60.0


def browser_paths() -> tuple[str | None, str | None]:
    """(chromium, chromedriver) found on PATH, or None each."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    return browser, shutil.which("chromedriver")


@pytest.fixture(scope="module")
def driver() -> Iterator:
    """A headless Chromium WebDriver (the browser installed first if missing)."""
    if None in browser_paths():
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            pytest.skip("chromium is not installed and installing it needs root and apt-get")
        res = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900)
        if res.returncode == CANNOT_RUN:
            pytest.skip(f"scripts/browser_setup.sh cannot run here: {res.stderr.strip()}")
        assert res.returncode == 0, f"scripts/browser_setup.sh failed:\n{res.stderr}"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = browser_paths()
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--window-size=1300,1600")
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Path:
    """Three small studies (card_guessing twice, high_low), one failed task added."""
    out = tmp_path_factory.mktemp("browser") / "outputs"
    runs = [
        ["study=paper"],
        ["study=paper", "study.name=paper_more", "study.grid.deck=[[3,3,3],[2,2,1]]"],
        [
            "study=high_low",
            "study.grids=null",
            "+study.grid.n=[2,3,4,5,6]",
            "+study.strategies.optimal={}",
        ],
    ]
    for overrides in runs:
        cfg = compose_config(
            f"paths.outputs={out}", "cluster=sync", "run.progress=false", *overrides
        )
        run_study(cfg, log=lambda *_: None)
    add_failure(out / "paper_more")
    edited_copy(out / "paper", out / "paper_edited")
    return out


def edited_copy(source: Path, target: Path) -> None:
    """A copy of a study whose optimal row says 2384/560 instead of 2383/560."""
    shutil.copytree(source / "results", target / "results")
    for path in store.result_files(target / "results"):
        table = pq.read_table(path)
        frame = table.to_pandas()
        optimal = frame["strategy"] == "optimal"
        frame.loc[optimal, "expected_score_exact"] = "2384/560"
        frame.loc[optimal, "expected_score"] = 2384 / 560
        edited = pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False)
        pq.write_table(edited.replace_schema_metadata(table.schema.metadata), path)
    write_summary(target, {"name": target.name, "description": "an edited copy"})


def add_failure(study_dir: Path) -> None:
    """Store one failed row in a study and write its summary (and report) again."""
    (ok,) = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "greedy"})
    bad = {**ok, "task_id": "f" * 20, "study": study_dir.name, "status": "error"}
    bad["deck"] = "9,9,9,9,9,9"
    bad.update(error="TaskError: deck='9,9,9,9,9,9': 10^11 states, too many", seconds=0.0)
    bad.update(expected_score=None, expected_score_exact=None, score_pmf=None)
    meta = store.file_metadata(store.result_files(study_dir / "results")[0])
    store.write_rows(study_dir / "results", [bad], meta)
    write_summary(study_dir, {"name": study_dir.name, "description": "with a failure"})


# One small study of every shipped family (a family with a report function shows figures).
FAMILY_STUDIES = {
    "card_guessing": ["study=paper", "study.name=cg", "study.grid.deck=[[3,3,3],[2,2,1]]"],
    "high_low": ["study=high_low", "study.name=hl"],
    "mastermind": [
        "study=mastermind",
        "study.name=mm",
        "study.grid.pegs=[3]",
        "study.grid.jar=[[1,1,1,1],[5,1,1,1]]",
        "study.strategies.optimal.guess_limit=[null,4]",
        "study.strategies.sharma_mittal.entropy_r=[1,2]",
        "study.strategies.sharma_mittal.entropy_t=[1,2]",
    ],
    "triples": ["study=triples", "study.name=tr", "study.grid.n=[1,2,3]"],
    "hand_guessing": ["study=hand_guessing", "study.name=hg", "study.grid.cards=[1]"],
    "no_repeat": ["study=no_repeat_conjecture", "study.name=nr", "study.grid.N=[4,5,6,20]"],
}
WIDTHS = (1300, 800)  # window widths (px) the figures are checked at, 1000 px tall


@pytest.fixture(scope="module")
def family_reports(tmp_path_factory) -> dict[str, Path]:
    """family -> the report.html of a small study of that family."""
    out = tmp_path_factory.mktemp("families") / "outputs"
    reports = {}
    for family, overrides in FAMILY_STUDIES.items():
        cfg = compose_config(
            f"paths.outputs={out}", "cluster=sync", "run.progress=false", *overrides
        )
        run_study(cfg, log=lambda *_: None)
        reports[family] = out / cfg.study.name / "report.html"
    return reports


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the screenshots go: $GUESSLAB_SCREENSHOTS, else the run's temporary folder
    (pytest keeps the last three runs' folders: /tmp/pytest-of-USER/pytest-N/screenshots0)."""
    folder = os.environ.get("GUESSLAB_SCREENSHOTS")
    return Path(folder) if folder else tmp_path_factory.mktemp("screenshots")


# Each figure's drawn box (its element and every SVG Plotly drew in it), its block's box, and
# the box of the element after its block, in page coordinates.
FIGURE_BOXES = """
const box = (e) => {
  const r = e.getBoundingClientRect();
  return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right};
};
const union = (boxes) => ({
  top: Math.min(...boxes.map((b) => b.top)), bottom: Math.max(...boxes.map((b) => b.bottom)),
  left: Math.min(...boxes.map((b) => b.left)), right: Math.max(...boxes.map((b) => b.right)),
});
return Array.from(document.querySelectorAll(".figure-block")).map((block) => {
  const fig = block.querySelector(".gl-figure");
  const svgs = Array.from(fig.querySelectorAll("svg.main-svg")).map(box);
  const next = block.nextElementSibling;
  return {
    title: block.querySelector("h4").textContent,
    svgs: svgs.length,
    element: box(fig),
    figure: union([box(fig), ...svgs]),
    block: box(block),
    next: next ? {...box(next), tag: next.tagName, text: next.textContent.slice(0, 60)} : null,
  };
});
"""


def overlaps(a: dict, b: dict) -> bool:
    """Whether two boxes share any area."""
    return (
        a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
        and (a["left"] < b["right"] and b["left"] < a["right"])
    )


@pytest.mark.parametrize("family", sorted(FAMILY_STUDIES))
def test_no_figure_covers_what_follows_it_at_two_widths(
    driver, family_reports, family, screenshots
):
    """Every figure of every family's report stays inside its block and off the next
    element (a table's header and first rows were drawn over a 0 px tall figure element),
    at two window widths; a full-page screenshot of each width is kept for a person."""
    from solvers.registry import family_report

    try:
        for width in WIDTHS:
            driver.set_window_size(width, 1000)
            open_page(driver, family_reports[family], "figuresReady")
            assert driver.execute_script("return document.body.dataset.figuresReady") != "failed"
            figures = driver.execute_script(FIGURE_BOXES)
            if family_report(family) is not None:
                assert figures, f"{family}: a family with a report function shows no figure"
            for fig in figures:
                where = f"{family} at {width} px, figure {fig['title']!r}"
                assert fig["svgs"] >= 1, f"{where}: not drawn"
                element, drawn = fig["element"], fig["figure"]
                assert element["bottom"] - element["top"] >= 100, (where, fig)
                assert element["bottom"] >= drawn["bottom"] - 0.5, (f"{where}: spills", fig)
                assert fig["block"]["top"] <= fig["figure"]["top"], (where, fig)
                assert fig["figure"]["bottom"] <= fig["block"]["bottom"] + 0.5, (where, fig)
                if fig["next"] is not None:
                    assert not overlaps(fig["figure"], fig["next"]), (where, fig)
            assert console_errors(driver) == []
            screenshot(driver, f"report_{family}_{width}px", screenshots, width=width)
    finally:
        driver.set_window_size(1300, 1600)


def wait_for(drv, script: str, timeout: float = WAIT_S):
    """The first truthy value of ``script`` (JavaScript returning a value), polled."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = drv.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {script}")


def open_page(drv, path: Path, ready: str) -> None:
    """Open ``path`` from disk and wait until ``ready`` (a body data attribute) is set."""
    assert path.exists(), path
    drv.get(path.as_uri())
    drv.get_log("browser")  # a fresh page: drop what an earlier one logged
    wait_for(drv, f"return document.body && document.body.dataset.{ready}")


def console_errors(drv) -> list[dict]:
    """What the page logged at level SEVERE (errors) since the last call."""
    return [entry for entry in drv.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(drv, name: str, tmp_path: Path, width: int = 1300) -> Path:
    """Save a full-page screenshot (``width`` px wide, at most 6000 px tall) as NAME.png
    in $GUESSLAB_SCREENSHOTS or ``tmp_path``; return its path."""
    folder = Path(os.environ.get("GUESSLAB_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    height = drv.execute_script("return document.documentElement.scrollHeight")
    drv.set_window_size(width, min(max(int(height), 800), 6000))
    path = folder / f"{name}.png"
    drv.save_screenshot(str(path))
    drv.set_window_size(1300, 1600)
    print(f"screenshot: {path}")
    return path


def table_by_title(drv, prefix: str):
    """The rendered table whose block's title starts with ``prefix``."""
    for block in drv.find_elements("css selector", "details.table-block"):
        if block.find_element("tag name", "summary").text.startswith(prefix):
            return block.find_element("css selector", ".gl-table")
    raise AssertionError(f"no table titled {prefix!r}")


def test_the_report_renders_every_table_and_figure_without_errors(driver, outputs, screenshots):
    path = outputs / "paper_more" / "report.html"
    open_page(driver, path, "figuresReady")
    assert driver.execute_script("return document.body.dataset.figuresReady") not in ("failed",)
    n_tables = len(driver.find_elements("css selector", ".gl-table.gl-ready"))
    assert n_tables == len(driver.find_elements("css selector", ".gl-table")) > 0
    figures = driver.find_elements("css selector", ".gl-figure .main-svg")
    assert len(figures) >= 1
    everything = table_by_title(driver, "All results")
    assert everything.get_attribute("data-total") == "4"  # 2 decks x (optimal, greedy)
    assert len(everything.find_elements("css selector", "tbody tr")) == 4
    failed = table_by_title(driver, "Failed tasks")
    assert failed.get_attribute("data-total") == "1"
    assert "10^11 states, too many" in failed.text
    assert console_errors(driver) == []
    screenshot(driver, "report_paper_more", screenshots)


def test_a_report_table_sorts_and_filters(driver, outputs):
    open_page(driver, outputs / "paper_more" / "report.html", "tablesReady")
    table = table_by_title(driver, "All results")
    table.find_element("css selector", "input[data-column='deck']").send_keys("3,3,3")
    wait_for(driver, "return document.querySelector('.gl-count') !== null")
    assert table.get_attribute("data-filtered") == "2"
    score = table.find_element("css selector", "input[data-column='expected_score_exact']")
    score.send_keys(">4.25")  # greater than 4.25: the optimum 2383/560 = 4.2553..., not 475/112
    assert table.get_attribute("data-filtered") == "1"
    assert "2383/560" in table.find_element("css selector", "tbody").text
    score.clear()
    score.send_keys("475/112")
    assert table.get_attribute("data-filtered") == "1"
    header = [
        h for h in table.find_elements("css selector", "thead th") if h.text == "expected_score"
    ]
    header[0].click()  # ascending
    first = table.find_element("css selector", "tbody tr").text
    assert "475/112" in first
    assert console_errors(driver) == []


def test_hovering_a_point_shows_its_parameters_and_exact_value(driver, outputs, screenshots):
    from selenium.webdriver import ActionChains

    open_page(driver, outputs / "high_low" / "report.html", "figuresReady")
    points = driver.find_elements("css selector", ".gl-figure .scatterlayer .trace .points path")
    assert len(points) == 5  # n = 2..6
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", points[1])
    ActionChains(driver).move_to_element(points[1]).perform()
    text = wait_for(
        driver,
        "const h = document.querySelector('.hoverlayer .hovertext');"
        "return h ? h.textContent : null;",
    )
    assert "n = 3" in text and "p_perfect_exact = 5/6" in text
    assert "p_perfect = 0.8333333333333334" in text  # the float's repr, every digit
    screenshot(driver, "report_high_low_hover", screenshots)
    assert console_errors(driver) == []


def test_the_index_shows_every_study_and_compares_two(driver, outputs, screenshots):
    from selenium.webdriver.support.ui import Select

    open_page(driver, outputs / "index.html", "compareReady")
    rows = driver.find_elements("css selector", "#status tbody tr")
    names = ["high_low", "paper", "paper_edited", "paper_more"]
    assert [r.get_attribute("data-study") for r in rows] == names
    cells = [c.text for c in rows[3].find_elements("tag name", "td")]
    # planned by the grid 4, stored 5 (the failed task was added outside the grid)
    assert cells[1:6] == ["card_guessing", "4", "5", "4", "1"]
    links = driver.find_elements("css selector", "#status a.report-link")
    assert len(links) == 4
    # paper and paper_edited share the (3,3,3) rows: greedy and optimal; optimal differs
    assert driver.execute_script("return document.body.dataset.compareReady") == "2"
    compare = driver.find_element("id", "compare-table")
    assert compare.get_attribute("data-differing") == "1"
    (changed,) = compare.find_elements("css selector", "tbody tr.gl-diff")
    assert "2383/560" in changed.text and "2384/560" in changed.text
    assert "1.786e-3" in changed.text and "1/560" in changed.text  # B - A, float and exact
    screenshot(driver, "index", screenshots)
    Select(driver.find_element("id", "compare-b")).select_by_visible_text("paper_more")
    assert compare.get_attribute("data-total") == "2"
    assert compare.get_attribute("data-differing") == "0"
    assert "2383/560" in compare.text
    Select(driver.find_element("id", "compare-b")).select_by_visible_text("paper")
    assert "pick two different studies" in driver.find_element("id", "compare-summary").text
    Select(driver.find_element("id", "compare-b")).select_by_visible_text("paper_more")
    driver.find_element("id", "compare-only-diff").click()
    assert compare.get_attribute("data-total") == "0"
    driver.find_element("id", "compare-only-diff").click()
    links[0].click()  # the link opens the report from disk
    wait_for(driver, "return document.body.dataset.figuresReady")
    assert driver.current_url.endswith("/high_low/report.html")
    assert console_errors(driver) == []


# study folder names whose links were a javascript: URL or dead (#, %, \\, ?)
HOSTILE_NAMES = ["javascript:alert(1)", "a#b", "100%", "back\\slash", "q?x=1", 'it\'s "q"']


def test_index_links_open_studies_of_any_folder_name_and_run_no_script(driver, outputs, tmp_path):
    """Each report link of the index, clicked, opens its own folder's report (a name such as
    javascript:alert(1) once made the link run that script)."""
    from selenium.common.exceptions import NoAlertPresentException

    out = tmp_path / "outputs"
    for name in ["paper", *HOSTILE_NAMES]:
        shutil.copytree(outputs / "paper", out / name)
    write_index(out)
    for name in HOSTILE_NAMES:
        open_page(driver, out / "index.html", "compareReady")
        row = driver.find_element("css selector", f"#status tr[data-study={json.dumps(name)}]")
        row.find_element("css selector", "a.report-link").click()
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018 (an alert would have opened by now)
        wait_for(driver, "return document.body && document.body.dataset.tablesReady")
        reached = Path(url2pathname(urlsplit(driver.current_url).path))
        assert reached == out / name / "report.html", (name, driver.current_url)
        assert console_errors(driver) == []


BIG = 10**30
SORT_EXACT = """
const div = document.createElement("div");
div.id = "exact-test";
document.body.appendChild(div);
GL.Table(div, {columns: [{name: "v", kind: "exact", format: ""}], rows: arguments[0]});
div.querySelector("th").click();
return Array.from(div.querySelectorAll("tbody td")).map((td) => td.title || td.textContent);
"""


def test_exact_columns_sort_and_filter_exactly_where_floats_tie(driver, outputs):
    """Three values a float cannot tell apart (1 - 1e-30, 1, 1 + 1e-30) sort exactly."""
    open_page(driver, outputs / "paper" / "report.html", "tablesReady")
    above, below = f"{BIG + 1}/{BIG}", f"{BIG - 1}/{BIG}"
    order = driver.execute_script(SORT_EXACT, [[above], ["1/1"], [below]])
    assert order == [below, "1/1", above]
    assert (
        driver.execute_script("return GL.cmpFrac(GL.parseFrac(arguments[0]), [1n, 1n])", above) == 1
    )
    assert driver.execute_script("return GL.fracDiff('475/112', '2383/560')") == "1/70"
    assert driver.execute_script("return GL.fracDiff('1/1', arguments[0])", above) == f"1/{BIG}"
    table = driver.find_element("id", "exact-test")  # the table made above
    table.find_element("css selector", "input[data-column='v']").send_keys(">1")
    assert table.get_attribute("data-filtered") == "1"
    assert table.find_element("css selector", "tbody td").get_attribute("title") == above
    assert console_errors(driver) == []
