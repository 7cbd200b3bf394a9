#!/usr/bin/env bash
# Headless Chromium and its WebDriver on this machine, for the browser tests of the HTML
# report (tests/test_report_browser.py).
#
# Installs Debian's chromium and chromium-driver with apt-get when either is missing, then
# checks that `chromium --headless` starts and prints its version.  Needs root and apt-get
# for the install.  Idempotent: with both already installed, it only checks and returns.
#
# Exit status: 0 ready; 3 cannot install here (not root, no apt-get); 1 something failed.
set -euo pipefail

log() { echo "browser_setup: $*" >&2; }

browser() { command -v chromium || command -v chromium-browser || true; }
driver() { command -v chromedriver || command -v chromium-driver || true; }

if [ -z "$(browser)" ] || [ -z "$(driver)" ]; then
    if [ "$(id -u)" != 0 ]; then
        log "chromium or chromium-driver is missing and installing them needs root"
        exit 3
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        log "chromium or chromium-driver is missing and there is no apt-get to install them"
        exit 3
    fi
    log "installing chromium and chromium-driver with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core \
        >/dev/null
fi

BROWSER=$(browser)
DRIVER=$(driver)
if [ -z "$BROWSER" ] || [ -z "$DRIVER" ]; then
    log "the install finished but chromium or chromedriver is still not on PATH"
    exit 1
fi
if ! version=$(timeout 60 "$BROWSER" --headless --no-sandbox --disable-gpu --version 2>&1); then
    log "$BROWSER does not start: $version"
    exit 1
fi
log "ready: $version; driver $("$DRIVER" --version 2>/dev/null | head -n 1)"
