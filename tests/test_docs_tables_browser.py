"""The built manual in headless Chromium at a phone's width (420 px) and a desktop's (1300 px):
no name in a table is broken inside a word ("first_gues" / "s"), no code block hides the end
of a line (a comment after a command), no page is wider than the window.  The pages are opened
from disk (file://).  The browser and its driver come as for the report's browser tests
(scripts/browser_setup.sh, through the ``driver`` fixture of tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# For each page: table code spans with a line break between two word characters, code blocks
# whose lines run past their box, and whether the page scrolls sideways as a whole.
LAYOUT = """
const word = /[A-Za-z0-9_]/;
const out = {codes: 0, broken: [], clipped: []};
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
      if (prev !== null && rect.top > prevTop + 2 && word.test(prev) && word.test(ch)) {
        out.broken.push(code.textContent);
      }
      prev = ch;
      prevTop = rect.top;
    }
  }
}
for (const code of document.querySelectorAll('.md-typeset pre > code')) {
  if (code.scrollWidth > code.clientWidth + 1) out.clipped.push(code.textContent.slice(0, 60));
}
const root = document.documentElement;
out.wide = root.scrollWidth > root.clientWidth;
return out;
"""


@pytest.mark.parametrize("width", [420, 1300])
def test_tables_keep_names_whole_and_code_blocks_show_whole_lines(driver, built_site, width):
    # built_site: the session's manual (tests/conftest.py)
    driver.set_window_size(width, 1200)
    pages = sorted(p for p in Path(built_site).rglob("*.html") if p.name != "404.html")
    codes, broken, clipped, wide = 0, [], [], []
    for page in pages:
        driver.get(page.as_uri())
        found = driver.execute_script(LAYOUT)
        name = str(page.relative_to(built_site))
        codes += found["codes"]
        broken += [f"{name}: {text}" for text in found["broken"]]
        clipped += [f"{name}: {text!r}" for text in found["clipped"]]
        wide += [name] if found["wide"] else []
    games = [p for p in pages if p.parent.name == "games"]
    assert codes > 500 and len(games) >= 5  # the tables and the game pages were there to check
    assert not broken, f"{len(broken)} names broken inside a word at {width} px: {broken[:10]}"
    assert not clipped, f"{len(clipped)} code blocks hide line ends at {width} px: {clipped[:5]}"
    assert not wide, f"pages wider than a {width} px window: {wide}"
