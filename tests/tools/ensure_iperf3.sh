#!/usr/bin/env bash
# Make `iperf3` available for the tcp-baseline runner tests (Debian package `iperf3`).
exec "$(dirname "$0")/ensure_tool.sh" iperf3 iperf3
