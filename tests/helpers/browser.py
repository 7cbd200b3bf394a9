"""Headless Chromium for the browser tests, installed first where it is missing."""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.helpers.repository import ROOT
from tests.helpers.setup_lock import one_process_at_a_time

BROWSER_SETUP = ROOT / "scripts" / "browser_setup.sh"
BROWSER_CANNOT_RUN = 3  # browser_setup.sh's exit status when this machine cannot install it


def browser_paths() -> tuple[str | None, str | None]:
    """(chromium, chromedriver) found on PATH, or None each."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    return browser, shutil.which("chromedriver")


def headless_chromium(window_size: str, logging_prefs: dict):
    """A headless Chromium WebDriver of ``window_size`` ("W,H") keeping the logs named in
    ``logging_prefs``; the browser is installed first (scripts/browser_setup.sh) if missing,
    and the test is skipped where that cannot be done."""
    import pytest

    if None in browser_paths():
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            pytest.skip("chromium is not installed and installing it needs root and apt-get")
        with one_process_at_a_time("browser-setup"):
            res = subprocess.run(
                ["bash", str(BROWSER_SETUP)], capture_output=True, text=True, timeout=900
            )
        if res.returncode == BROWSER_CANNOT_RUN:
            pytest.skip(f"scripts/browser_setup.sh cannot run here: {res.stderr.strip()}")
        assert res.returncode == 0, f"scripts/browser_setup.sh failed:\n{res.stderr}"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = browser_paths()
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={window_size}")
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", logging_prefs)
    return webdriver.Chrome(service=Service(chromedriver), options=options)
