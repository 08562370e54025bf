#!/usr/bin/env bash
# Make COMMAND available for the tests that start it, from the Debian PACKAGE that ships it:
#   ensure_tool.sh COMMAND PACKAGE
#
# We install that one package and download nothing else.
# Already on PATH: nothing to do. Not root and no sudo: say so and exit non-zero, so that
# `make` stops with a clear reason instead of the tests silently skipping under CI.
set -euo pipefail

tool=${1:?usage: ensure_tool.sh COMMAND PACKAGE}
package=${2:?usage: ensure_tool.sh COMMAND PACKAGE}

if command -v "$tool" >/dev/null 2>&1; then
    exit 0
fi

run_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        echo "ensure_tool: $tool is missing and installing '$package' needs root" >&2
        return 1
    fi
}

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_tool: $tool is missing and apt-get is unavailable;" \
         "install the '$package' package (it provides $tool) by hand" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The package index may be stale on a fresh machine; one update before giving up is enough.
run_root apt-get install -y --no-install-recommends "$package" >/dev/null 2>&1 \
    || { run_root apt-get update -qq && \
         run_root apt-get install -y --no-install-recommends "$package" >/dev/null; }

command -v "$tool" >/dev/null 2>&1 || {
    echo "ensure_tool: installed '$package' but $tool is still not on PATH" >&2
    exit 1
}
