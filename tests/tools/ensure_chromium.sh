#!/usr/bin/env bash
# Make `chromium` available for the tests that start it (Debian package `chromium`).
exec "$(dirname "$0")/ensure_tool.sh" chromium chromium
