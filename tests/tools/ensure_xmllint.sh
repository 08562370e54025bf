#!/usr/bin/env bash
# Make `xmllint` available for the JUnit report's schema test.
#
# It ships in Debian's `libxml2-utils` package; we install that and download nothing else.
# Already on PATH: nothing to do. Not root and no sudo: say so and exit non-zero, so that
# `make` stops with a clear reason instead of the tests silently skipping under CI.
set -euo pipefail

if command -v xmllint >/dev/null 2>&1; then
    exit 0
fi

run_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        echo "ensure_xmllint: xmllint is missing and installing 'libxml2-utils' needs root" >&2
        return 1
    fi
}

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_xmllint: xmllint is missing and apt-get is unavailable;" \
         "install the 'libxml2-utils' package by hand" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The package index may be stale on a fresh machine; one update before giving up is enough.
run_root apt-get install -y --no-install-recommends libxml2-utils >/dev/null 2>&1 \
    || { run_root apt-get update -qq && \
         run_root apt-get install -y --no-install-recommends libxml2-utils >/dev/null; }

command -v xmllint >/dev/null 2>&1 || {
    echo "ensure_xmllint: installed 'libxml2-utils' but xmllint is still not on PATH" >&2
    exit 1
}
