#!/usr/bin/env bash
# Make `xmllint` available for the tests that start it (Debian package `libxml2-utils`).
exec "$(dirname "$0")/ensure_tool.sh" xmllint libxml2-utils
