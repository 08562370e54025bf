#!/usr/bin/env bash
# Make `promtool` available for the tests that start it (Debian package `prometheus`).
exec "$(dirname "$0")/ensure_tool.sh" promtool prometheus
