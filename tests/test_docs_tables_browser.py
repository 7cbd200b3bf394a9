"""The built manual in headless Chromium at a phone's width (420 px) and a desktop's (1300 px),
as a reader sees it: no name in a table is broken inside a word ("first_gues" / "s"), no
code block hides the end of a line, and a wrapped code line continues indented under its own
start (never at column 0, where it would read as a line of its own); at 1300 px every table
fits the text column (no column hidden); at 420 px a table wider than the screen scrolls
sideways with its first column in view, and every figure is shown wide enough that its
smallest text is at least 9 px; no page is wider than the window.  The pages are opened from
disk (file://).  The browser and its driver come as for the report's browser tests
(scripts/browser_setup.sh, through the ``driver`` fixture of tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from solvers.kit.summary_parts import MIN_TEXT_PX, PAGE_PX

pytestmark = pytest.mark.slow

MIN_FIGURE_TEXT_PX = 9.0  # the smallest text a reader should meet in a figure, at any width

# For each page: table code spans with a line break between two letters or digits, code
# blocks whose lines run past their box, wrapped code lines whose continuation starts where
# the line does, tables wider than the text column (and, scrolled to their end, whether their
# first column is still in view), figures' shown widths, and whether the page scrolls
# sideways as a whole.
LAYOUT = """
const alnum = /[A-Za-z0-9]/;
const out = {codes: 0, broken: [], clipped: [], unindented: [], wide_tables: [],
             lost_first_column: [], figures: []};
const column = document.querySelector('.md-content__inner').getBoundingClientRect();
for (const code of document.querySelectorAll('.md-typeset table code')) {
  out.codes += 1;
  let prev = null, prevTop = null;
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      const ch = node.data[i];
      if (prev !== null && rect.top > prevTop + 2 && alnum.test(prev) && alnum.test(ch)) {
        out.broken.push(code.textContent);
      }
      prev = ch;
      prevTop = rect.top;
    }
  }
}
for (const code of document.querySelectorAll('.md-typeset pre > code')) {
  if (code.scrollWidth > code.clientWidth + 1) out.clipped.push(code.textContent.slice(0, 60));
  const lines = code.querySelectorAll(':scope > span[id^="__span"]');
  if (lines.length === 0) out.unindented.push('no line spans: ' + code.textContent.slice(0, 40));
  for (const line of lines) {
    const text = line.textContent.replace(/\\n$/, '');
    if (!text.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(line);
    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
    const first = rects[0];
    const later = rects.filter(r => r.top > first.top + 2);
    if (later.some(r => r.left < first.left + 8)) out.unindented.push(text.slice(0, 60));
  }
}
for (const table of document.querySelectorAll('.md-typeset table:not([class])')) {
  const width = table.getBoundingClientRect().width;
  if (width <= column.width + 1) continue;
  const head = table.rows[0].textContent.trim().replace(/\\s+/g, ' ').slice(0, 50);
  out.wide_tables.push(head + ' (' + Math.round(width) + ' px)');
  const box = table.closest('.md-typeset__scrollwrap');
  box.scrollLeft = box.scrollWidth;
  const boxLeft = box.getBoundingClientRect().left;
  const cell = table.rows[table.rows.length - 1].cells[0].getBoundingClientRect();
  if (cell.left < boxLeft - 1 || cell.right <= boxLeft + 1) out.lost_first_column.push(head);
  box.scrollLeft = 0;
}
for (const img of document.querySelectorAll('.md-typeset img')) {
  if (!img.getAttribute('src').endsWith('.png')) continue;
  const box = img.closest('.figure-box');
  out.figures.push({src: img.getAttribute('src'), shown: img.getBoundingClientRect().width,
                    boxed: box !== null,
                    reachable: box !== null &&
                               box.scrollWidth >= img.getBoundingClientRect().width - 1});
}
const root = document.documentElement;
out.wide = root.scrollWidth > root.clientWidth;
return out;
"""


def page_layouts(driver, site: Path, width: int) -> dict[str, dict]:
    """Each page of ``site`` (but 404.html) -> what LAYOUT found there at ``width`` px."""
    driver.set_window_size(width, 1200)
    found = {}
    for page in sorted(p for p in site.rglob("*.html") if p.name != "404.html"):
        driver.get(page.as_uri())
        found[str(page.relative_to(site))] = driver.execute_script(LAYOUT)
    return found


@pytest.fixture(scope="module", params=[420, 1300], ids=["420px", "1300px"])
def layouts(request, driver, built_site) -> tuple[int, dict[str, dict]]:
    """(width, every page's layout at that width): each page loaded once per width."""
    # built_site: the session's manual (tests/conftest.py)
    return request.param, page_layouts(driver, Path(built_site), request.param)


def every(layouts: dict[str, dict], key: str) -> list[str]:
    return [f"{name}: {item}" for name, found in layouts.items() for item in found[key]]


def test_tables_keep_names_whole_and_code_blocks_show_whole_lines(layouts):
    width, found = layouts
    games = [name for name in found if name.startswith("games/")]
    assert sum(f["codes"] for f in found.values()) > 500 and len(games) >= 5  # were checked
    broken, clipped = every(found, "broken"), every(found, "clipped")
    wide = [name for name, f in found.items() if f["wide"]]
    assert not broken, f"{len(broken)} names broken inside a word at {width} px: {broken[:10]}"
    assert not clipped, f"{len(clipped)} code blocks hide line ends at {width} px: {clipped[:5]}"
    assert not wide, f"pages wider than a {width} px window: {wide}"


def test_a_wrapped_code_line_continues_indented_under_its_start(layouts):
    width, found = layouts
    unindented = every(found, "unindented")
    assert not unindented, f"code lines wrapping to column 0 at {width} px: {unindented[:5]}"


def test_every_table_fits_the_text_column_on_a_desktop(layouts):
    width, found = layouts
    if width < 1000:
        pytest.skip("a phone's tables may scroll (held by the test below)")
    wide = every(found, "wide_tables")
    assert not wide, f"{len(wide)} tables wider than the text column at {width} px: {wide}"


def test_a_table_wider_than_a_phone_scrolls_with_its_first_column_in_view(layouts):
    width, found = layouts
    if width >= 1000:
        pytest.skip("no table is wider than a desktop's column (held above)")
    assert every(found, "wide_tables"), "no wide table at 420 px: nothing was checked"
    lost = every(found, "lost_first_column")
    assert not lost, f"tables whose first column scrolls out of view at {width} px: {lost}"


def test_every_figure_shows_its_smallest_text_at_9_px_or_more(layouts):
    """Every figure's text is at least MIN_TEXT_PX at the page's PAGE_PX (summary_parts'
    check when it is saved); shown narrower, its text shrinks in proportion: the figure is
    never shown so narrow that its smallest text falls under 9 px, and where it is wider than
    the screen its box scrolls to show all of it."""
    width, found = layouts
    figures = [(name, f) for name, page in found.items() for f in page["figures"]]
    assert len(figures) >= 10
    small = [
        f"{name}: {f['src']} at {f['shown']:.0f} px"
        for name, f in figures
        if f["shown"] * MIN_TEXT_PX / PAGE_PX < MIN_FIGURE_TEXT_PX
    ]
    cut = [f"{name}: {f['src']}" for name, f in figures if not f["reachable"]]
    assert not small, f"figures whose text shows under 9 px at {width} px: {small}"
    assert not cut, f"figures not in a box that shows all of them at {width} px: {cut}"
