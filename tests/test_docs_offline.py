"""The built manual works opened from disk with no network: nothing a page loads comes from
another site, and its search runs from file:// (the offline plugin's <site>/search/search_index.js,
and the copy of iframe-worker's shim in docs/assets/ that lets the search worker start there).

The site is the one tests/test_docs.py checks (the session fixture ``built_site``, built once).
The browser test drives headless Chromium as tests/test_report_browser.py does."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.helpers.browser import headless_chromium

# attributes whose URL the browser loads on its own, by tag (<a href> is a link a reader follows)
LOADED = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "input": ("src",),
}
# <link> relations that name another page rather than something the browser fetches
NAVIGATION_RELS = {"canonical", "alternate", "next", "prev", "author", "license", "help"}
# url(...) and @import in CSS, whether in a stylesheet, a <style>, a style= or a script
CSS_URL = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)|\burl\(\s*["']?([^"')\s]+)""")
EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", flags=re.I)


class LoadedURLs(HTMLParser):
    """The URLs that a page makes the browser fetch, as (what, url) pairs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        names = LOADED.get(tag, ())
        if tag == "link" and not set(values.get("rel", "").lower().split()) <= NAVIGATION_RELS:
            names = ("href",)
        for name in names:
            if name in values:
                candidates = values[name].split(",") if name == "srcset" else [values[name]]
                for value in candidates:
                    if value.strip():
                        self.found.append((f"<{tag} {name}>", value.strip().split()[0]))
        self._css(f"<{tag} style>", values.get("style", ""))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self._css("<style>", data)

    def _css(self, what: str, text: str) -> None:
        for match in CSS_URL.finditer(text):
            self.found.append((what, match.group(1) or match.group(2)))


def outside_fetches(site: Path) -> list[str]:
    """Every URL of another site that a page, stylesheet or script of ``site`` loads."""
    bad = []
    for page in sorted(site.rglob("*.html")):
        parser = LoadedURLs()
        parser.feed(page.read_text(errors="replace"))
        bad += [f"{page.relative_to(site)}: {w} {u}" for w, u in parser.found if EXTERNAL.match(u)]
    for asset in sorted([*site.rglob("*.css"), *site.rglob("*.js")]):
        for match in CSS_URL.finditer(asset.read_text(errors="replace")):
            url = match.group(1) or match.group(2)
            if EXTERNAL.match(url):
                bad.append(f"{asset.relative_to(site)}: {url}")
    return bad


def test_the_built_site_fetches_nothing_from_outside(built_site):
    assert outside_fetches(built_site) == []
    # the theme's script fetches from a CDN or a code host only for a mermaid diagram or a
    # repository link (repo_url): no page has either
    for page in built_site.rglob("*.html"):
        html = page.read_text(errors="replace")
        assert 'class="mermaid"' not in html, page
        assert "md-source" not in html, page
    # outbound links are not fetches: the footer's link to the theme's site stays
    assert "https://squidfunk.github.io/mkdocs-material/" in (built_site / "index.html").read_text()


def test_outside_fetches_finds_each_kind_of_load(tmp_path):
    """The scanner is not blind: each way a page can load from another site is found."""
    (tmp_path / "a.html").write_text(
        '<link rel="stylesheet" href="https://fonts.example/css">'
        '<link rel="preconnect" href="//fonts.example">'
        '<link rel="next" href="https://example.org/next.html">'
        '<a href="https://example.org/">a link, not a load</a>'
        '<script src="HTTPS://cdn.example/x.js"></script>'
        '<img srcset="local.png 1x, https://img.example/y.png 2x">'
        "<style>@import 'https://css.example/z.css';</style>"
        "<div style=\"background: url('http://img.example/bg.png')\"></div>"
    )
    (tmp_path / "b.css").write_text("p{background:url(https://img.example/p.png)}")
    (tmp_path / "c.js").write_text('e.style.background="url(img/local.png)";')
    assert outside_fetches(tmp_path) == [
        "a.html: <link href> https://fonts.example/css",
        "a.html: <link href> //fonts.example",
        "a.html: <script src> HTTPS://cdn.example/x.js",
        "a.html: <img srcset> https://img.example/y.png",
        "a.html: <style> https://css.example/z.css",
        "a.html: <div style> http://img.example/bg.png",
        "b.css: https://img.example/p.png",
    ]


def test_the_search_index_is_a_script_every_page_can_load_from_disk(built_site):
    """Opened from disk, the theme loads <site>/search/search_index.js (a script may be read from
    file://, a JSON fetch may not), and starts its search worker through the iframe-worker
    shim, which every page must load before the theme's script."""
    script = (built_site / "search" / "search_index.js").read_text()
    prefix = "var __index = "
    assert script.startswith(prefix)
    index = json.loads(script[len(prefix) :])
    assert index == json.loads((built_site / "search" / "search_index.json").read_text())
    pages = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"index.html", "architecture.html", "games/mastermind.html"} <= pages
    for page in built_site.rglob("*.html"):
        if page.name == "404.html":
            continue  # served only
        scripts = re.findall(r'<script src="([^"]+)"', page.read_text())
        shims = [s for s in scripts if "iframe-worker" in s]
        assert len(shims) == 1, (page, scripts)
        assert (page.parent / shims[0]).resolve().is_file(), (page, shims[0])
        bundle = next(i for i, s in enumerate(scripts) if "/bundle." in s or s.startswith("bundle"))
        assert scripts.index(shims[0]) < bundle, (page, scripts)


WAIT_S = 30.0


@pytest.fixture(scope="module")
def chromium() -> Iterator:
    """Headless Chromium (installed first if missing), logging every request it sends."""
    drv = headless_chromium("1300,1000", {"performance": "ALL", "browser": "ALL"})
    yield drv
    drv.quit()


def requested_urls(drv) -> list[str]:
    """The URLs the browser asked for since the log was last read (Chrome's network log)."""
    urls = []
    for entry in drv.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@pytest.mark.slow
def test_search_works_and_nothing_is_fetched_with_the_site_opened_from_disk(chromium, built_site):
    from selenium.webdriver.common.by import By

    drv = chromium
    drv.get_log("performance")  # start from an empty log
    drv.get((built_site / "games" / "high_low.html").as_uri())
    box = drv.find_element(By.CSS_SELECTOR, "input[data-md-component=search-query]")
    deadline = time.monotonic() + WAIT_S
    while not box.is_displayed() and time.monotonic() < deadline:
        time.sleep(0.1)  # the theme shows the box once its search worker is ready
    errors = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    assert box.is_displayed(), f"no search box opened from disk; console: {errors}"
    box.click()
    box.send_keys("Mastermind")
    items: list = []
    while not items and time.monotonic() < deadline:
        time.sleep(0.1)
        items = drv.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
    assert items, "typing in the search box shows no result"
    titles = [i.text.split("\n")[0] for i in items]
    assert any(t.startswith("Code-jar Mastermind") for t in titles), titles
    link = items[0].find_element(By.CSS_SELECTOR, "a").get_attribute("href")
    assert link.startswith("file://") and ".html" in link, link
    assert not [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    outside = [u for u in requested_urls(drv) if not u.startswith(("file:", "data:", "blob:"))]
    assert outside == []
