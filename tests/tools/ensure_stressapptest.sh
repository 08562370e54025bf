#!/usr/bin/env bash
# Make `stressapptest` available for the memory-stress runner tests (Debian package `stressapptest`).
exec "$(dirname "$0")/ensure_tool.sh" stressapptest stressapptest
