#!/usr/bin/env bash
# Make `chromium` available for the HTML report's headless-browser test.
#
# It ships in Debian's `chromium` package; we install that and download nothing else.
# Already on PATH: nothing to do. Not root and no sudo: say so and exit non-zero, so that
# `make` stops with a clear reason instead of the tests silently skipping under CI.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi

run_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        echo "ensure_chromium: chromium is missing and installing 'chromium' needs root" >&2
        return 1
    fi
}

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: chromium is missing and apt-get is unavailable;" \
         "install the 'chromium' package by hand" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The package index may be stale on a fresh machine; one update before giving up is enough.
run_root apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
    || { run_root apt-get update -qq && \
         run_root apt-get install -y --no-install-recommends chromium >/dev/null; }

command -v chromium >/dev/null 2>&1 || {
    echo "ensure_chromium: installed 'chromium' but chromium is still not on PATH" >&2
    exit 1
}
